import type { Kysely } from 'kysely';

/**
 * Drops the (brand_id, transaction_id) index of ledger_events. Its one reader, the refund
 * look-up, now names the event types it accepts and uses the idempotency key
 * (brand_id, event_type, transaction_id) instead; every recorded event then updates one
 * index fewer.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('ledger_events_transaction_idx').ifExists().execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('ledger_events_transaction_idx').on('ledger_events').columns(['brand_id', 'transaction_id']).execute();
}
