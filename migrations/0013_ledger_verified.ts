import { type Kysely, sql } from 'kysely';

/**
 * Verified and public ledger rows (docs/webhooks.md, "One transaction reported twice"): rows a
 * provider webhook writes are `verified`; a verified row may name in `supersedes` the public row
 * (pixel, SDK) of the same key it replaces. The key (brand, event_type, transaction_id) then holds
 * at most one row of each kind. Existing webhook rows are verified.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE ledger_events ADD COLUMN verified boolean NOT NULL DEFAULT false, ADD COLUMN supersedes text`.execute(db);
  await sql`UPDATE ledger_events SET verified = true WHERE source NOT IN ('pixel', 'sdk')`.execute(db);
  await sql`ALTER TABLE ledger_events DROP CONSTRAINT ledger_events_idempotency_key`.execute(db);
  await sql`ALTER TABLE ledger_events ADD CONSTRAINT ledger_events_idempotency_key UNIQUE (brand_id, event_type, transaction_id, verified)`.execute(db);
}

/** Back to one row a key: a superseded public row goes, the verified row that replaced it stays. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DELETE FROM ledger_events p USING ledger_events v WHERE v.supersedes = p.id AND v.brand_id = p.brand_id`.execute(db);
  await sql`ALTER TABLE ledger_events DROP CONSTRAINT ledger_events_idempotency_key`.execute(db);
  await sql`ALTER TABLE ledger_events ADD CONSTRAINT ledger_events_idempotency_key UNIQUE (brand_id, event_type, transaction_id)`.execute(db);
  await sql`ALTER TABLE ledger_events DROP COLUMN supersedes, DROP COLUMN verified`.execute(db);
}
