import { type Kysely, sql } from 'kysely';

/**
 * A statement that revokes, changes or deletes portal sessions (a logout, an operator's UPDATE, a
 * user's or brand's deletion) notifies `record_changes` with `sessions *`: every API process then
 * drops the sessions it keeps in memory (src/portal/session.ts). A new session needs no notice.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION notify_session_changes() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('record_changes', 'sessions *');
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER portal_sessions_changes AFTER UPDATE OR DELETE OR TRUNCATE ON portal_sessions
    FOR EACH STATEMENT EXECUTE FUNCTION notify_session_changes()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER IF EXISTS portal_sessions_changes ON portal_sessions`.execute(db);
  await sql`DROP FUNCTION IF EXISTS notify_session_changes()`.execute(db);
}
