import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema';

// BIGINT (int8) columns come back as numbers: our counters stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));
// DATE columns stay 'YYYY-MM-DD' strings: they are calendar days, not instants.
pg.types.setTypeParser(1082, (v) => v);

export type Db = Kysely<Database>;

/** Limits of a pool on the request path (CONTRACT 10): a Postgres down or hung fails the statement instead of holding it. */
export type PgTimeouts = { statementMs: number; connectMs: number };

/**
 * A pool of up to `max` connections. With `timeouts`, connecting (or waiting for a free one) is
 * bounded by `connectMs` and a statement by `statementMs`, also on a hung server; without, statements
 * run as long as they need (migrations, CLI, workers).
 */
export function createDb(databaseUrl: string, max = 10, timeouts?: PgTimeouts): Db {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max,
    ...(timeouts && {
      connectionTimeoutMillis: timeouts.connectMs,
      statement_timeout: timeouts.statementMs,
      query_timeout: timeouts.statementMs + 250,
    }),
  });
  // A client the server disconnects (restart, failover, a terminated backend) emits 'error': when
  // idle through the pool, when checked out (between a transaction's statements) on itself.
  // Either way it is dropped and the next query opens a new one, so it must not crash us.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  return db;
}

const pools = new WeakMap<Db, pg.Pool>();

/**
 * Runs a statement prepared once per connection (a named statement): Postgres parses and
 * plans it the first times only. Kysely sends every statement unnamed, so the hot
 * ingestion inserts go to the pool itself.
 */
export async function executePrepared<Row>(db: Db, name: string, text: string, values: unknown[]): Promise<Row[]> {
  const pool = pools.get(db);
  if (!pool) throw new Error('executePrepared: not a database made by createDb');
  const result = await pool.query({ name, text, values });
  return result.rows as Row[];
}

/** Creates the database named in the URL when it does not exist (CONTRACT 2). */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name) return;
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      // Identifiers cannot be bound as parameters; quote it the Postgres way.
      await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`).catch((err: { code?: string }) => {
        if (err.code !== '42P04') throw err; // created concurrently by another process
      });
    }
  } finally {
    await client.end();
  }
}

/** Drops a database (tests only). */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name.replaceAll('"', '""')}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
