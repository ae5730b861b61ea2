import { type Kysely, sql } from 'kysely';

/**
 * Attribution records: domains, links, creator codes, and the two accept-time tables
 * that decide `duplicate` and double as outboxes until ClickHouse has the fact
 * (installs, ledger_events: `warehoused_at` stays null until the worker confirms).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('domains')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('hostname', 'text', (c) => c.notNull().unique())
    .addColumn('brand_id', 'text', (c) => c.references('brands.id').onDelete('cascade')) // null: shared domain
    .addColumn('verification_status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('verification_token', 'text', (c) => c.notNull())
    .addColumn('verification_checked_at', 'timestamptz')
    .addColumn('dns', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('certificate_status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('links')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('brand_id', 'text', (c) => c.notNull().references('brands.id').onDelete('cascade'))
    .addColumn('creator_id', 'text', (c) => c.notNull().references('creators.id'))
    .addColumn('domain_id', 'text', (c) => c.notNull().references('domains.id'))
    .addColumn('slug', 'text', (c) => c.notNull().defaultTo('')) // '' is the domain's root link
    .addColumn('type', 'text', (c) => c.notNull().check(sql`type IN ('web', 'app')`))
    .addColumn('destination_url', 'text', (c) => c.notNull())
    .addColumn('ios_url', 'text')
    .addColumn('android_url', 'text')
    .addColumn('active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('links_domain_slug_key', ['domain_id', 'slug'])
    .execute();
  await db.schema.createIndex('links_brand_idx').on('links').columns(['brand_id', 'creator_id']).execute();

  await db.schema
    .createTable('creator_codes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('brand_id', 'text', (c) => c.notNull().references('brands.id').onDelete('cascade'))
    .addColumn('creator_id', 'text', (c) => c.notNull().references('creators.id'))
    .addColumn('label', 'text', (c) => c.notNull()) // upper-case
    .addColumn('active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('credited_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('creator_codes_brand_label_key', ['brand_id', 'label'])
    .execute();

  // One row per (brand, install_id): the deduplication key, the source of purchase
  // inheritance, and the outbox of the ClickHouse install fact.
  await db.schema
    .createTable('installs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('brand_id', 'text', (c) => c.notNull().references('brands.id').onDelete('cascade'))
    .addColumn('install_id', 'text', (c) => c.notNull())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('attributed', 'boolean', (c) => c.notNull())
    .addColumn('resolution_method', 'text', (c) => c.notNull())
    .addColumn('confidence', 'real')
    .addColumn('link_id', 'bigint')
    .addColumn('code_id', 'text')
    .addColumn('code_label', 'text')
    .addColumn('creator_id', 'text')
    .addColumn('app_version', 'text')
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull())
    .addColumn('recorded_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('warehoused_at', 'timestamptz')
    .addUniqueConstraint('installs_brand_install_key', ['brand_id', 'install_id'])
    .execute();

  // One row per ledger event: (brand, event_type, transaction_id) decides `duplicate`;
  // the row keeps everything needed to rebuild the ClickHouse ledger row.
  await db.schema
    .createTable('ledger_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('brand_id', 'text', (c) => c.notNull().references('brands.id').onDelete('cascade'))
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('transaction_id', 'text', (c) => c.notNull())
    .addColumn('external_user_id', 'text')
    .addColumn('amount', 'numeric(18, 4)', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('click_token', 'text')
    .addColumn('link_id', 'bigint')
    .addColumn('creator_id', 'text')
    .addColumn('code_id', 'text')
    .addColumn('code_label', 'text')
    .addColumn('resolution_method', 'text', (c) => c.notNull())
    .addColumn('confidence', 'real')
    .addColumn('sandbox', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull())
    .addColumn('recorded_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('warehoused_at', 'timestamptz')
    .addUniqueConstraint('ledger_events_idempotency_key', ['brand_id', 'event_type', 'transaction_id'])
    .execute();
  await db.schema
    .createIndex('ledger_events_transaction_idx')
    .on('ledger_events')
    .columns(['brand_id', 'transaction_id'])
    .execute();

  // The outbox sweeper reads only what ClickHouse has not confirmed yet.
  await sql`CREATE INDEX installs_unwarehoused_idx ON installs (recorded_at) WHERE warehoused_at IS NULL`.execute(db);
  await sql`CREATE INDEX ledger_events_unwarehoused_idx ON ledger_events (recorded_at) WHERE warehoused_at IS NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['ledger_events', 'installs', 'creator_codes', 'links', 'domains']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
