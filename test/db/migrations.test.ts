import { NO_MIGRATIONS, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrationDatabase } from '../helpers/migration-database';

/** Every migration goes down and comes back up; 0010/0011 swap the record-change triggers both ways. */
const { db: database, migrateTo } = migrationDatabase('migrations');

/** The record-change triggers on `links`, by name. */
const linkTriggers = async () => {
  const { rows } = await sql<{ tgname: string }>`
    SELECT tgname FROM pg_trigger WHERE tgrelid = 'links'::regclass AND tgname LIKE '%record%' ORDER BY tgname`.execute(database());
  return rows.map((r) => r.tgname);
};

describe('migrations', () => {
  it('all go down to an empty database and up again', async () => {
    await migrateTo('latest');
    await migrateTo(NO_MIGRATIONS);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'kysely%'`.execute(database());
    expect(rows[0]!.n).toBe(0);
    await migrateTo('latest');
    expect(await linkTriggers()).toEqual(['links_record_deletes', 'links_record_inserts', 'links_record_truncates', 'links_record_updates']);
  });

  it('0011 down gives back 0010’s one trigger per table, and up replaces it again', async () => {
    await migrateTo('latest');
    await migrateTo('0010_record_changes');
    expect(await linkTriggers()).toEqual(['links_notify_record_changes']);
    await migrateTo('latest');
    expect(await linkTriggers()).toEqual(['links_record_deletes', 'links_record_inserts', 'links_record_truncates', 'links_record_updates']);
  });
});
