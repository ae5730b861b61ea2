import { type Kysely, sql } from 'kysely';

/**
 * Any change to the records that cached reads answer with (brands, their campaigns, creators,
 * links, domains, codes) notifies `record_changes`, committed with the change: every API process
 * then drops its cached answers (src/reads/changes.ts). One notification per statement; a
 * code's credited_count, which every accepted install and event may move, is not such a change.
 */
const TABLES: [string, string][] = [
  ['brands', 'INSERT OR UPDATE OR DELETE OR TRUNCATE'],
  ['campaigns', 'INSERT OR UPDATE OR DELETE OR TRUNCATE'],
  ['creators', 'INSERT OR UPDATE OR DELETE OR TRUNCATE'],
  ['links', 'INSERT OR UPDATE OR DELETE OR TRUNCATE'],
  ['domains', 'INSERT OR UPDATE OR DELETE OR TRUNCATE'],
  ['creator_codes', 'INSERT OR UPDATE OF brand_id, creator_id, label, active OR DELETE OR TRUNCATE'],
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION notify_record_changes() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('record_changes', '');
      RETURN NULL;
    END $$`.execute(db);
  for (const [table, events] of TABLES) {
    await sql`
      CREATE TRIGGER ${sql.id(`${table}_notify_record_changes`)}
      AFTER ${sql.raw(events)} ON ${sql.table(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION notify_record_changes()`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [table] of TABLES) await sql`DROP TRIGGER IF EXISTS ${sql.id(`${table}_notify_record_changes`)} ON ${sql.table(table)}`.execute(db);
  await sql`DROP FUNCTION IF EXISTS notify_record_changes()`.execute(db);
}
