import { toPage } from '../attribution/reporting/paging';
import type { Db } from '../db/database';
import type { Platform } from '../platforms';
import { conflict, notFound } from '../refusal';
import { hashPassword, newId, newToken, sha256 } from '../secrets';
import { afterCreatedRow } from './created-order';

export async function createBrand(db: Db, brand: { name: string; logo_url?: string | null; default_platforms: Platform[] }) {
  return db
    .insertInto('brands')
    .values({
      id: newId(),
      name: brand.name,
      logo_url: brand.logo_url ?? null,
      default_platforms: [...new Set(brand.default_platforms)],
      pixel_key: newToken('pk_', 18),
    })
    .returning(['id', 'name', 'logo_url', 'default_platforms', 'pixel_key', 'created_at'])
    .executeTakeFirstOrThrow();
}

export async function listBrands(db: Db, page: { limit: number; cursor?: [string] }) {
  let q = db
    .selectFrom('brands')
    .select(['id', 'name', 'logo_url', 'default_platforms', 'created_at'])
    .orderBy(['created_at', 'id'])
    .limit(page.limit + 1);
  if (page.cursor) q = q.where(afterCreatedRow('brands', page.cursor[0]));
  return toPage(await q.execute(), page.limit, (row) => [row.id]);
}

async function findBrand(db: Db, id: string) {
  const brand = await db.selectFrom('brands').select(['id', 'name']).where('id', '=', id).executeTakeFirst();
  if (!brand) throw notFound();
  return brand;
}

/** A new API key: answered this once, stored only as its hash. */
export async function createApiKey(db: Db, brandId: string, name: string | null) {
  await findBrand(db, brandId);
  const key = newToken('sk_', 24);
  const row = await db
    .insertInto('api_keys')
    .values({ id: newId(), brand_id: brandId, name, key_hash: sha256(key), key_prefix: key.slice(0, 7) })
    .returning(['id', 'brand_id', 'name', 'key_prefix', 'created_at'])
    .executeTakeFirstOrThrow();
  return { ...row, key };
}

/** A portal login for the brand; 409 email_taken. */
export async function createPortalUser(db: Db, brandId: string, user: { email: string; password: string }) {
  await findBrand(db, brandId);
  const row = await db
    .insertInto('portal_users')
    .values({ id: newId(), brand_id: brandId, email: user.email.toLowerCase(), password_hash: await hashPassword(user.password) })
    // The unique email decides, also between concurrent requests.
    .onConflict((oc) => oc.column('email').doNothing())
    .returning(['id', 'brand_id', 'email', 'created_at'])
    .executeTakeFirst();
  if (!row) throw conflict('email_taken');
  return row;
}
