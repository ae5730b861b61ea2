import { randomBytes } from 'node:crypto';
import { Migrator, type NO_MIGRATIONS } from 'kysely';
import { afterAll, beforeAll } from 'vitest';
import { createDb, type Db, dropDatabase, ensureDatabase } from '../../src/db/database';
import { FolderMigrationProvider } from '../../src/db/migrate';
import { testDatabaseUrl } from './test-postgres';

/**
 * An empty database of its own for a migration test file (made before its tests, dropped after),
 * and `migrateTo` a named migration, `'latest'` or NO_MIGRATIONS (all the way down).
 */
export function migrationDatabase(name: string) {
  const databaseUrl = testDatabaseUrl(`svc_test_${name}_${randomBytes(5).toString('hex')}`);
  let db: Db | undefined;
  let migrator: Migrator;
  beforeAll(async () => {
    await ensureDatabase(databaseUrl);
    db = createDb(databaseUrl, 2);
    migrator = new Migrator({ db, provider: new FolderMigrationProvider() });
  });
  afterAll(async () => {
    await db?.destroy();
    await dropDatabase(databaseUrl);
  });
  return {
    db: () => db!,
    async migrateTo(to: string | typeof NO_MIGRATIONS) {
      const { error } = to === 'latest' ? await migrator.migrateToLatest() : await migrator.migrateTo(to);
      if (error) throw error;
    },
  };
}
