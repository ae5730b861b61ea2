import { type Kysely, sql } from 'kysely';

/** Portal sessions: a random token in an HttpOnly cookie, stored here only as its SHA-256. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('portal_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.notNull().references('portal_users.id').onDelete('cascade'))
    .addColumn('brand_id', 'text', (c) => c.notNull().references('brands.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('portal_sessions_user_idx').on('portal_sessions').column('user_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('portal_sessions').ifExists().execute();
}
