import { CompiledQuery, type DatabaseConnection, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema';

// BIGINT (int8) columns come back as numbers: our counters stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));
// DATE columns stay 'YYYY-MM-DD' strings: they are calendar days, not instants.
pg.types.setTypeParser(1082, (v) => v);

export type Db = Kysely<Database>;

/** Limits of a pool on the request path (docs/operations.md#a-store-down-or-hung): a Postgres down or hung fails the statement instead of holding it. */
export type PgTimeouts = { statementMs: number; connectMs: number };

/**
 * A pool of up to `max` connections. With `timeouts`, connecting (or waiting for a free one) is
 * bounded by `connectMs` and a statement by `statementMs`, also on a hung server; without, statements
 * run as long as they need (migrations, CLI, workers).
 */
export function createDb(databaseUrl: string, max = 10, timeouts?: PgTimeouts, ownNotices: readonly string[] = []): Db {
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
  const takers: OwnNoticeTaker[] = [];
  // A connection hears its own notices before the statement (or COMMIT) that sent them resolves.
  if (ownNotices.length) {
    pool.on('connect', (client) => {
      // The backend's pid (pg sets it from BackendKeyData; its types leave it out): other sessions' notices are the feed's.
      const own = client as pg.PoolClient & { processID: number };
      client.on('notification', (n) => {
        if (n.processId === own.processID) for (const take of takers) take(n.channel, n.payload ?? '');
      });
    });
  }
  const listen = async (connection: DatabaseConnection) => {
    for (const channel of ownNotices) await connection.executeQuery(CompiledQuery.raw(`LISTEN ${pg.escapeIdentifier(channel)}`));
  };
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool, ...(ownNotices.length && { onCreateConnection: listen }) }) });
  pools.set(db, pool);
  noticeTakers.set(db, takers);
  return db;
}

const pools = new WeakMap<Db, pg.Pool>();

type OwnNoticeTaker = (channel: string, payload: string) => void;
const noticeTakers = new WeakMap<Db, OwnNoticeTaker[]>();

/**
 * Hands `take` every notice a statement of this pool sends on a channel createDb listens to
 * (`ownNotices`), once it is committed and before that statement's promise resolves.
 */
export function onOwnNotices(db: Db, take: OwnNoticeTaker): void {
  const takers = noticeTakers.get(db);
  if (!takers) throw new Error('onOwnNotices: not a database made by createDb');
  takers.push(take);
}

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

/** Creates the database named in the URL when it does not exist, so a fresh install starts without a manual step. */
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
