import { type Kysely, sql } from 'kysely';

/**
 * Domains a brand claims in the portal are served only once verified (docs/api.md, "Domains"), so a
 * hostname is no longer unique: several brands may claim it while pending. What stays unique is the
 * served row (operator-registered or verified) and one claim per brand. `registered_by` says who
 * registered a row; `records_missing_since` when a verified domain's records were first found gone.
 * Rows made before this migration: shared ones are the operator's; a brand's is counted a portal
 * claim (no record says otherwise), so a pending one stops being served until it is verified.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('domains')
    .addColumn('registered_by', 'text', (c) => c.notNull().defaultTo('portal').check(sql`registered_by IN ('operator', 'portal')`))
    .addColumn('records_missing_since', 'timestamptz')
    .execute();
  await sql`UPDATE domains SET registered_by = 'operator', certificate_status = 'unmanaged' WHERE brand_id IS NULL`.execute(db);
  await sql`ALTER TABLE domains DROP CONSTRAINT domains_hostname_key`.execute(db);
  await sql`CREATE UNIQUE INDEX domains_served_hostname_key ON domains (hostname)
    WHERE registered_by = 'operator' OR verification_status = 'verified'`.execute(db);
  // NULLS NOT DISTINCT is Postgres 15+: a shared row's brand is '' here, and shared rows are served anyway.
  await sql`CREATE UNIQUE INDEX domains_brand_hostname_key ON domains (hostname, coalesce(brand_id, ''))`.execute(db);
  await sql`CREATE INDEX domains_hostname_id_idx ON domains (hostname, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Back to one row per hostname: claims that were never served give way to the row that is.
  await sql`DELETE FROM domains d WHERE NOT (registered_by = 'operator' OR verification_status = 'verified')
    AND NOT EXISTS (SELECT 1 FROM links l WHERE l.domain_id = d.id)
    AND EXISTS (SELECT 1 FROM domains o WHERE o.hostname = d.hostname AND o.id <> d.id)`.execute(db);
  await sql`DROP INDEX IF EXISTS domains_hostname_id_idx`.execute(db);
  await sql`DROP INDEX IF EXISTS domains_brand_hostname_key`.execute(db);
  await sql`DROP INDEX IF EXISTS domains_served_hostname_key`.execute(db);
  await sql`ALTER TABLE domains ADD CONSTRAINT domains_hostname_key UNIQUE (hostname)`.execute(db);
  await db.schema.alterTable('domains').dropColumn('records_missing_since').dropColumn('registered_by').execute();
}
