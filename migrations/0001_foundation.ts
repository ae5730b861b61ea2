import { type Kysely, sql } from 'kysely';

// Brands and what belongs to them in the operational store: API keys, portal users,
// campaigns. Creators are shared across brands. Facts (placements, metrics) live in ClickHouse.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('brands')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('logo_url', 'text')
    .addColumn('default_platforms', sql`text[]`, (c) => c.notNull())
    .addColumn('pixel_key', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('brand_id', 'text', (c) => c.notNull().references('brands.id').onDelete('cascade'))
    .addColumn('name', 'text')
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('revoked_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('portal_users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('brand_id', 'text', (c) => c.notNull().references('brands.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('creators')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('first_name', 'text')
    .addColumn('handles', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('followers', 'bigint')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('campaigns')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('brand_id', 'text', (c) => c.notNull().references('brands.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('start_date', 'date')
    .addColumn('end_date', 'date')
    .addColumn('visible', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('campaigns_brand_idx').on('campaigns').column('brand_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['campaigns', 'creators', 'portal_users', 'api_keys', 'brands']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
