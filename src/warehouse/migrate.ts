import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Warehouse } from './clickhouse';

const ddlDir = fileURLToPath(new URL('../../clickhouse', import.meta.url));

/** Splits a DDL file into statements: `;` at a line end separates them, `--` lines are comments. */
export function splitStatements(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Applies clickhouse/NNNN_name.sql files in order and records each in `schema_migrations`.
 * Statements use IF NOT EXISTS, so a file interrupted half-way is safe to apply again.
 */
export async function migrateWarehouse(wh: Warehouse): Promise<string[]> {
  await wh.command(
    `CREATE TABLE IF NOT EXISTS schema_migrations (version String, applied_at DateTime DEFAULT now())
     ENGINE = ReplacingMergeTree ORDER BY version`,
  );
  // Through the client, not `rows`: migrations are not held to the request path's read bound.
  const versions = await wh.client.query({ query: 'SELECT version FROM schema_migrations FINAL', format: 'JSONEachRow' });
  const applied = new Set((await versions.json<{ version: string }>()).map((r) => r.version));
  const files = (await readdir(ddlDir)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort();
  const done: string[] = [];
  for (const file of files) {
    const version = file.replace(/\.sql$/, '');
    if (applied.has(version)) continue;
    for (const statement of splitStatements(await readFile(join(ddlDir, file), 'utf8'))) {
      await wh.command(statement);
    }
    await wh.insert('schema_migrations', [{ version }], `migration:${version}`);
    done.push(version);
  }
  return done;
}
