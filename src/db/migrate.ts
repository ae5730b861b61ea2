import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type Migration, type MigrationProvider, Migrator } from 'kysely';
import type { Db } from './database';

const migrationsDir = fileURLToPath(new URL('../../migrations', import.meta.url));

/** Every file in migrations/ named NNNN_name.ts, applied in name order. */
export class FolderMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await readdir(migrationsDir)).filter((f) => /^\d{4}_.+\.ts$/.test(f)).sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      migrations[file.replace(/\.ts$/, '')] = await import(pathToFileURL(join(migrationsDir, file)).href);
    }
    return migrations;
  }
}

export async function migratePostgres(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new FolderMigrationProvider() });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
