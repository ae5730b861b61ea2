import { type Kysely, sql } from 'kysely';

/**
 * Any change to what the click endpoint serves (links, their domains, their brands' names)
 * notifies `link_changes`, committed with the change: every API process then drops its
 * in-process cache of served links (src/db/change-feed.ts). Statement-level triggers: one
 * notification per statement, and Postgres folds identical ones within a transaction.
 */
const TABLES = ['links', 'domains', 'brands'];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION notify_link_changes() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('link_changes', '');
      RETURN NULL;
    END $$`.execute(db);
  for (const table of TABLES) {
    await sql`
      CREATE TRIGGER ${sql.id(`${table}_notify_link_changes`)}
      AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${sql.table(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION notify_link_changes()`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) await sql`DROP TRIGGER IF EXISTS ${sql.id(`${table}_notify_link_changes`)} ON ${sql.table(table)}`.execute(db);
  await sql`DROP FUNCTION IF EXISTS notify_link_changes()`.execute(db);
}
