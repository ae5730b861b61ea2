import { type Kysely, sql } from 'kysely';

/**
 * Rules of the attribution set-up records that need an index:
 * - a slug is unique per domain regardless of case: slugs keep the case they were given,
 *   and `Maya` next to `maya` on one domain would be two links a person cannot tell apart;
 * - deleting a creator code asks whether any install or ledger row was credited with it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE UNIQUE INDEX links_domain_slug_ci_key ON links (domain_id, lower(slug))`.execute(db);
  await sql`CREATE INDEX ledger_events_code_idx ON ledger_events (code_id) WHERE code_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX installs_code_idx ON installs (code_id) WHERE code_id IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const index of ['installs_code_idx', 'ledger_events_code_idx', 'links_domain_slug_ci_key']) {
    await db.schema.dropIndex(index).ifExists().execute();
  }
}
