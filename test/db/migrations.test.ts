import { randomBytes } from 'node:crypto';
import { Migrator, NO_MIGRATIONS, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db, dropDatabase, ensureDatabase } from '../../src/db/database';
import { FolderMigrationProvider } from '../../src/db/migrate';

/** Every migration goes down and comes back up; 0010/0011 swap the record-change triggers both ways. */
const databaseUrl = `postgres://root@127.0.0.1:5432/svc_test_migrations_${randomBytes(5).toString('hex')}`;
let db: Db;
let migrator: Migrator;

beforeAll(async () => {
  await ensureDatabase(databaseUrl);
  db = createDb(databaseUrl, 2);
  migrator = new Migrator({ db, provider: new FolderMigrationProvider() });
});
afterAll(async () => {
  await db.destroy();
  await dropDatabase(databaseUrl);
});

const migrate = async (to: 'latest' | string | typeof NO_MIGRATIONS) => {
  const { error } = to === 'latest' ? await migrator.migrateToLatest() : await migrator.migrateTo(to);
  if (error) throw error;
};

/** The record-change triggers on `links`, by name. */
const linkTriggers = async () => {
  const { rows } = await sql<{ tgname: string }>`
    SELECT tgname FROM pg_trigger WHERE tgrelid = 'links'::regclass AND tgname LIKE '%record%' ORDER BY tgname`.execute(db);
  return rows.map((r) => r.tgname);
};

describe('migrations', () => {
  it('all go down to an empty database and up again', async () => {
    await migrate('latest');
    await migrate(NO_MIGRATIONS);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'kysely%'`.execute(db);
    expect(rows[0]!.n).toBe(0);
    await migrate('latest');
    expect(await linkTriggers()).toEqual(['links_record_deletes', 'links_record_inserts', 'links_record_truncates', 'links_record_updates']);
  });

  it('0011 down gives back 0010’s one trigger per table, and up replaces it again', async () => {
    await migrate('latest');
    await migrate('0010_record_changes');
    expect(await linkTriggers()).toEqual(['links_notify_record_changes']);
    await migrate('latest');
    expect(await linkTriggers()).toEqual(['links_record_deletes', 'links_record_inserts', 'links_record_truncates', 'links_record_updates']);
  });
});
