import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client';

type ClientOptions = NonNullable<Parameters<typeof createClient>[0]>;
import { createChdbConnection } from 'chdb/connection';
import { waitForRelease } from '../wait-for-release';
import { inlineParams } from './inline-params';

/** Query parameters bound server-side with {name:Type} placeholders; never spliced into SQL. */
export type QueryParams = Record<string, unknown>;

export type Warehouse = {
  client: ClickHouseClient;
  database: string;
  embedded: boolean;
  /** Runs a query and returns every row (for small, aggregated answers). */
  rows<T>(query: string, params?: QueryParams): Promise<T[]>;
  /** Runs a query and yields its rows as they are read (exports); awaiting it surfaces the query's errors before anything is answered. */
  stream<T>(query: string, params?: QueryParams): Promise<AsyncIterable<T>>;
  /**
   * Inserts rows in one INSERT. `dedupToken` makes a replay of the same batch a no-op
   * on tables with a deduplication window. It is always sent: under chDB settings are
   * session-wide SETs, so an insert without its own token would inherit the last one.
   */
  insert(table: string, rows: readonly object[], dedupToken?: string): Promise<void>;
  command(query: string, params?: QueryParams): Promise<void>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
};

export type WarehouseOptions = {
  url?: string;
  database: string;
  dataDir: string;
  /**
   * A ClickHouse server's reads (`rows` whole, `stream` until its answer starts) are given up after
   * this long and fail with code ETIMEDOUT, which the routes answer 503 (docs/operations.md#a-store-down-or-hung). Unset: no bound.
   */
  queryTimeoutMs?: number;
  /** Called once when the embedded directory is held by another process and opening waits for it (waitForRelease). */
  onDirectoryHeld?: () => void;
  /** Embedded only: connections that serve `rows` and `stream` side by side (default READ_CONNECTIONS). */
  readConnections?: number;
};

/**
 * Embedded reads run on connections of their own, this many: a chDB connection runs one statement
 * at a time, and two cores gain nothing past a few in flight (docs/reads.md, "Concurrent reads").
 */
export const READ_CONNECTIONS = 3;

// Same JSON shapes from chDB and from a server: 64-bit integers as numbers. Any number of months
// in one INSERT: a batch's event times span 1970-2099 and a snapshot history any years, and past
// ClickHouse's default of 100 partitions the whole batch would fail on every retry.
const settings = { output_format_json_quote_64bit_integers: 0, date_time_output_format: 'iso', max_partitions_per_insert_block: '0' } as const;

// The client's own log is off: it writes several lines to stderr for each failed request, and
// each failure also reaches its caller, which logs it (once per burst during an outage).
const quiet = { level: ClickHouseLogLevel.OFF };

export async function createWarehouse(opts: WarehouseOptions): Promise<Warehouse> {
  const embedded = !opts.url;
  let client: ClickHouseClient;
  if (embedded) {
    const path = join(opts.dataDir, 'clickhouse');
    mkdirSync(path, { recursive: true });
    // chdb/connection implements @clickhouse/client's Connection, typed against client-common.
    const connection = (await openEmbedded(path, opts.onDirectoryHeld ?? (() => {}))) as unknown as ClientOptions['connection'];
    client = createClient({ connection });
    // chDB runs client-level settings as SET statements before every query, and a SET lasts
    // for the session: set them once. It also ignores the client's `database` option.
    for (const [name, value] of Object.entries(settings)) {
      await client.command({ query: `SET ${name} = {value:String}`, query_params: { value: String(value) } });
    }
    await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${opts.database}` });
    await client.command({ query: `USE ${opts.database}` });
    const readers: ClickHouseClient[] = [];
    for (let i = 0; i < (opts.readConnections ?? READ_CONNECTIONS); i++) {
      // Same directory, same process: chDB lets connections share it, each with its own session.
      const reader = createClient({ connection: createChdbConnection({ path }) as unknown as ClientOptions['connection'] });
      for (const [name, value] of Object.entries(settings)) {
        await reader.command({ query: `SET ${name} = {value:String}`, query_params: { value: String(value) } });
      }
      await reader.command({ query: `USE ${opts.database}` });
      readers.push(reader);
    }
    return warehouseOver(client, { database: opts.database, embedded, readers });
  } else {
    const bootstrap = createClient({ url: opts.url, log: quiet });
    await bootstrap.command({ query: `CREATE DATABASE IF NOT EXISTS ${opts.database}` });
    await bootstrap.close();
    // A read given up (queryTimeoutMs) is cancelled on the server too, not left running there.
    const serverSettings = { ...settings, cancel_http_readonly_queries_on_client_close: 1 as const };
    client = createClient({ url: opts.url, database: opts.database, clickhouse_settings: serverSettings, log: quiet });
  }

  return warehouseOver(client, { database: opts.database, embedded, queryTimeoutMs: embedded ? undefined : opts.queryTimeoutMs });
}

/**
 * The Warehouse over an opened client: reads bounded by `queryTimeoutMs` when given. With `readers`
 * (embedded), `rows` and `stream` run on the least busy of them with their values written into the
 * statement (inlineParams), and everything else on `client`.
 */
export function warehouseOver(
  client: ClickHouseClient,
  opts: { database: string; embedded: boolean; queryTimeoutMs?: number; readers?: ClickHouseClient[] },
): Warehouse {
  const pool = (opts.readers ?? []).map((reader) => ({ reader, busy: 0 }));
  /** A read on the least busy reader (inlined values), or on `client` (bound values). */
  const query = async (text: string, params: QueryParams | undefined, signal: AbortSignal | undefined) => {
    if (pool.length === 0) return client.query({ query: text, query_params: params, format: 'JSONEachRow', abort_signal: signal });
    const slot = pool.reduce((a, b) => (b.busy < a.busy ? b : a));
    slot.busy++;
    try {
      return await slot.reader.query({ query: inlineParams(text, params), format: 'JSONEachRow', abort_signal: signal });
    } finally {
      slot.busy--;
    }
  };
  // The read races a timer: past it the read fails as a store unavailable (ETIMEDOUT) and is aborted.
  const bounded = async <T>(read: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> => {
    if (opts.queryTimeoutMs === undefined) return read(undefined);
    const controller = new AbortController();
    const timedOut = new Promise<never>((_, reject) =>
      controller.signal.addEventListener(
        'abort',
        () => reject(Object.assign(new Error(`ClickHouse did not answer within ${opts.queryTimeoutMs} ms`), { code: 'ETIMEDOUT' })),
        { once: true },
      ),
    );
    const timer = setTimeout(() => controller.abort(), opts.queryTimeoutMs);
    try {
      return await Promise.race([read(controller.signal), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    client,
    database: opts.database,
    embedded: opts.embedded,
    rows<T>(text: string, params?: QueryParams) {
      return bounded(async (signal) => {
        const result = await query(text, params, signal);
        // The client stops watching the signal once the answer starts: a body that stalls is closed here.
        signal?.addEventListener('abort', () => result.close(), { once: true });
        return parseEachRow<T>(await result.text());
      });
    },
    async stream<T>(text: string, params?: QueryParams) {
      const result = await bounded((signal) => query(text, params, signal));
      // chDB hands over a result only once complete: parse it whole, as rows does.
      const whole = pool.length > 0 ? parseEachRow<T>(await result.text()) : undefined;
      return (async function* () {
        if (whole) return yield* whole;
        for await (const rows of result.stream()) {
          for (const row of rows) yield row.json<T>();
        }
      })();
    },
    async insert(table, rows, dedupToken) {
      if (rows.length === 0) return;
      await client.insert({
        table,
        values: rows as object[],
        format: 'JSONEachRow',
        clickhouse_settings: { insert_deduplication_token: dedupToken ?? randomUUID() },
      });
    },
    async command(query, params) {
      await client.command({ query, query_params: params });
    },
    async ping() {
      const res = await client.ping();
      return res.success;
    },
    async close() {
      await Promise.all(pool.map(({ reader }) => reader.close()));
      await client.close();
    },
  };
}

/**
 * JSONEachRow text as rows, in one JSON.parse: the client's own row-by-row parsing costs about
 * 10 µs a row, 4 ms of CPU for a year of daily rows (docs/benchmarks.md, "Reads").
 */
function parseEachRow<T>(text: string): T[] {
  const body = text.trimEnd();
  return body === '' ? [] : (JSON.parse(`[${body.replaceAll('\n', ',')}]`) as T[]);
}

/** The embedded connection, once no other process holds the directory (see waitForRelease). */
async function openEmbedded(path: string, onHeld: () => void) {
  // chDB reports a locked directory only as a failed connection (the lock message goes to stderr).
  const held = (err: unknown) => (err as { code?: unknown }).code === 'CHDB_CONNECTION';
  try {
    return await waitForRelease(() => createChdbConnection({ path }), { held, onHeld });
  } catch (err) {
    if (!held(err)) throw err;
    throw new Error(`cannot open embedded ClickHouse at ${path} (another process may hold it: is the service already running?)`, { cause: err });
  }
}
