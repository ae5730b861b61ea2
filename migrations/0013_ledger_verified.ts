import { type Kysely, sql } from 'kysely';

/**
 * Verified and public ledger rows (docs/webhooks.md, "One transaction reported twice"): rows a
 * provider webhook writes are `verified`; a verified row may name in `supersedes` the public row
 * (pixel, SDK) of the same key it replaces. The key (brand, event_type, transaction_id) then holds
 * at most one row of each kind. Existing webhook rows are verified.
 *
 * The two look-ups the accepting insert makes per row take the key's transaction lock first and
 * read with a fresh snapshot (VOLATILE functions do): a public and a verified row of one key
 * accepted at the same instant by two processes are decided one after the other, so the verified
 * row always names the public one, or the public one is a duplicate.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE ledger_events ADD COLUMN verified boolean NOT NULL DEFAULT false, ADD COLUMN supersedes text`.execute(db);
  await sql`UPDATE ledger_events SET verified = true WHERE source NOT IN ('pixel', 'sdk')`.execute(db);
  await sql`ALTER TABLE ledger_events DROP CONSTRAINT ledger_events_idempotency_key`.execute(db);
  await sql`ALTER TABLE ledger_events ADD CONSTRAINT ledger_events_idempotency_key UNIQUE (brand_id, event_type, transaction_id, verified)`.execute(db);
  await sql`
    CREATE FUNCTION ledger_key_lock(p_brand text, p_event_type text, p_transaction_id text) RETURNS void
    LANGUAGE sql VOLATILE AS $$
      SELECT pg_advisory_xact_lock(hashtextextended(p_brand || '/' || p_event_type || '/' || p_transaction_id, 1013))
    $$`.execute(db);
  await sql`
    CREATE FUNCTION ledger_public_row(p_brand text, p_event_type text, p_transaction_id text) RETURNS text
    LANGUAGE plpgsql VOLATILE AS $$
    DECLARE found text;
    BEGIN
      PERFORM ledger_key_lock(p_brand, p_event_type, p_transaction_id);
      SELECT id INTO found FROM ledger_events
      WHERE brand_id = p_brand AND event_type = p_event_type AND transaction_id = p_transaction_id AND NOT verified;
      RETURN found;
    END $$`.execute(db);
  await sql`
    CREATE FUNCTION ledger_verified_holds(p_brand text, p_event_type text, p_transaction_id text) RETURNS boolean
    LANGUAGE plpgsql VOLATILE AS $$
    DECLARE found boolean;
    BEGIN
      PERFORM ledger_key_lock(p_brand, p_event_type, p_transaction_id);
      SELECT true INTO found FROM ledger_events
      WHERE brand_id = p_brand AND event_type = p_event_type AND transaction_id = p_transaction_id AND verified;
      RETURN coalesce(found, false);
    END $$`.execute(db);
}

/** Back to one row a key: a superseded public row goes, the verified row that replaced it stays. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION IF EXISTS ledger_verified_holds(text, text, text)`.execute(db);
  await sql`DROP FUNCTION IF EXISTS ledger_public_row(text, text, text)`.execute(db);
  await sql`DROP FUNCTION IF EXISTS ledger_key_lock(text, text, text)`.execute(db);
  await sql`DELETE FROM ledger_events p USING ledger_events v WHERE v.supersedes = p.id AND v.brand_id = p.brand_id`.execute(db);
  await sql`ALTER TABLE ledger_events DROP CONSTRAINT ledger_events_idempotency_key`.execute(db);
  await sql`ALTER TABLE ledger_events ADD CONSTRAINT ledger_events_idempotency_key UNIQUE (brand_id, event_type, transaction_id)`.execute(db);
  await sql`ALTER TABLE ledger_events DROP COLUMN supersedes, DROP COLUMN verified`.execute(db);
}
