import { type Kysely, sql } from 'kysely';

/**
 * Billing connections, one per (brand, provider): the webhook token looked up by its SHA-256 and
 * sealed, signing secrets sealed. billing_references maps a provider's other ids (a payment intent,
 * a subscription) to their ledger row, for refunds and renewals that name only those.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('billing_connections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('brand_id', 'text', (c) => c.notNull().references('brands.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) =>
      c.notNull().check(sql`provider IN ('revenuecat', 'adapty', 'stripe', 'shopify', 'apple')`),
    )
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('token_encrypted', 'text', (c) => c.notNull())
    .addColumn('signing_secret_encrypted', 'text')
    .addColumn('sandbox_secret_encrypted', 'text') // Adapty's second Authorization value
    .addColumn('settings', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .defaultTo('awaiting_first_event')
        .check(sql`status IN ('awaiting_first_event', 'connected', 'error')`),
    )
    .addColumn('last_error', 'text')
    .addColumn('last_event_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('billing_connections_brand_provider_key', ['brand_id', 'provider'])
    .execute();
  await db.schema.createIndex('billing_connections_created_idx').on('billing_connections').columns(['created_at', 'id']).execute();

  await db.schema
    .createTable('billing_references')
    .addColumn('brand_id', 'text', (c) => c.notNull().references('brands.id').onDelete('cascade'))
    .addColumn('reference', 'text', (c) => c.notNull())
    .addColumn('transaction_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('billing_references_pkey', ['brand_id', 'reference'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('billing_references').ifExists().execute();
  await db.schema.dropTable('billing_connections').ifExists().execute();
}
