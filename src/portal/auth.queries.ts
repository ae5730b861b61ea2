import type { Db } from '../db/database';

/** The portal user of an email (stored lower-case) with its brand's name, for login. */
export function userByEmail(db: Db, email: string) {
  return db
    .selectFrom('portal_users')
    .innerJoin('brands', 'brands.id', 'portal_users.brand_id')
    .select(['portal_users.id', 'portal_users.brand_id', 'portal_users.email', 'portal_users.password_hash', 'brands.name as brand_name'])
    .where('portal_users.email', '=', email.toLowerCase())
    .executeTakeFirst();
}

/** A session's user email and brand name. */
export function sessionNames(db: Db, userId: string) {
  return db
    .selectFrom('portal_users')
    .innerJoin('brands', 'brands.id', 'portal_users.brand_id')
    .select(['portal_users.email', 'brands.name'])
    .where('portal_users.id', '=', userId)
    .executeTakeFirstOrThrow();
}

/** Replaces a user's password hash, unless it changed meanwhile (another login's rehash, a reset). */
export async function setPasswordHash(db: Db, userId: string, previous: string, hash: string): Promise<void> {
  await db.updateTable('portal_users').set({ password_hash: hash }).where('id', '=', userId).where('password_hash', '=', previous).execute();
}
