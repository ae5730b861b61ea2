import { createHash } from 'node:crypto';
import { batchFailures, factsWritten } from '../src/metrics';
import type { Db } from '../src/db/database';
import type { FactKind, FactRow } from '../src/queues/facts';
import { OUTBOX_KINDS } from '../src/queues/outbox/accept';
import { confirmWarehoused, type Outbox } from '../src/queues/outbox/sweeper';
import type { QueryParams, Warehouse } from '../src/warehouse/clickhouse';
import { type FactArea, publishFactChanges } from '../src/reads/changes';
import type { RepeatedLog } from '../src/repeated-log';

/**
 * The write of one batch, in named steps run in this order: dedupe -> insert -> fan out -> confirm
 * -> announce (writeBatch). The consumer that gathers the batch is workers/batch-worker.ts; the
 * order is what keeps every fact written, delivered and confirmed once (docs/ingestion.md).
 */

/** What a writer's hooks may use; `webhooks` turns the attribution facts into webhook deliveries (workers/writers.ts). */
export type WriterContext = { warehouse: Warehouse; db: Db; webhooks?: { facts(kind: 'installs' | 'ledger', rows: { id: string; brand_id: string }[]): Promise<unknown> } };

/** What a queue consumer needs to know about its fact kind, whose rows are `Row`. */
export type FactWriter<Row extends FactRow = FactRow> = {
  kind: FactKind;
  /** ClickHouse table the rows go to, one INSERT per batch. */
  table: string;
  /**
   * The unique id column of a table whose rows must never count twice: a possible replay inserts
   * only missing ids. Tables whose key replaces (placements, snapshots) leave it out.
   */
  idColumn?: keyof Row & string;
  /**
   * The time column the table is partitioned by (its rows also carry `brand_id`, which leads the
   * sort key): a check by id then reads only the brands and months of the rows it checks.
   */
  timeColumn?: keyof Row & string;
  /** Optional work on every row of the batch after the insert, before the jobs complete (derived tables). Must be idempotent. */
  afterInsert?(rows: Row[], ctx: WriterContext): Promise<void>;
  /** Outbound webhook events of the batch's facts, made before their outbox confirmation (and by the sweeper's). Must be idempotent. */
  fanOut?(rows: Row[], ctx: WriterContext): Promise<void>;
  /** Kinds accepted in Postgres (see outboxOf): once ClickHouse has a row it leaves the outbox, and the sweeper sends what never arrived. */
  outbox?: { source: Outbox['source']; fact(row: never): Row };
  /** The brands whose facts of `area` a written batch changed: their cached answers are read again (src/reads/pipeline.ts). */
  lands?: { area: FactArea; brands(rows: Row[], ctx: WriterContext): Promise<string[] | 'every brand'> | string[] | 'every brand' };
  maxRows?: number;
  maxWaitMs?: number;
  /** Jobs per batch at most (1,024): a worker holds twice as many and fetches the next hand while one is written. */
  maxJobs?: number;
};

/** The outbox a writer confirms, with the id column it is checked by; a writer with an outbox needs an outbox kind and an id column. */
export function outboxOf(writer: FactWriter): Outbox | undefined {
  if (!writer.outbox) return undefined;
  const kind = OUTBOX_KINDS.find((k) => k === writer.kind);
  if (!kind || !writer.idColumn) throw new Error(`writer ${writer.kind}: an outbox needs an outbox kind and an idColumn`);
  return { ...writer.outbox, kind, table: writer.table, idColumn: writer.idColumn };
}

/** A job of the batch as the write sees it; `mayHaveRun`: its rows may be in ClickHouse already (the consumer decides). */
export type BatchJob = { id: string; rows: FactRow[]; mayHaveRun: boolean };

/** Ids per check query: a server takes query parameters in the URL, whose size it bounds. */
const ID_CHECK_CHUNK = 1000;

/**
 * Dedupe: the batch's rows less duplicates (`all`), and of those the rows no earlier attempt wrote
 * (`missing`). Only rows of jobs that may have run are looked up in ClickHouse, by id.
 */
export async function dedupe(writer: FactWriter, warehouse: Warehouse, jobs: readonly BatchJob[]): Promise<{ missing: FactRow[]; all: FactRow[] }> {
  const idColumn = writer.idColumn;
  if (!idColumn) {
    const rows = jobs.flatMap((j) => j.rows);
    return { missing: rows, all: rows };
  }
  const seen = new Set<string>();
  const fresh: FactRow[] = [];
  const suspect: FactRow[] = [];
  for (const job of jobs) {
    for (const row of job.rows) {
      const id = String(row[idColumn]);
      if (seen.has(id)) continue;
      seen.add(id);
      (job.mayHaveRun ? suspect : fresh).push(row);
    }
  }
  if (suspect.length === 0) return { missing: fresh, all: fresh };
  const written = new Set<string>();
  for (let i = 0; i < suspect.length; i += ID_CHECK_CHUNK) {
    for (const id of await writtenIds(writer, warehouse, idColumn, suspect.slice(i, i + ID_CHECK_CHUNK))) written.add(id);
  }
  return { missing: [...fresh, ...suspect.filter((r) => !written.has(String(r[idColumn])))], all: [...fresh, ...suspect] };
}

/** Which of these rows' ids ClickHouse has, looked up within their brands and time span when the writer names its time column. */
async function writtenIds(writer: FactWriter, warehouse: Warehouse, idColumn: string, rows: FactRow[]): Promise<string[]> {
  const { table, timeColumn } = writer;
  const params: QueryParams = { ids: rows.map((r) => String(r[idColumn])) };
  let bounds = '';
  if (timeColumn) {
    // chDateTime text sorts as the times do.
    const times = rows.map((r) => String(r[timeColumn])).sort();
    Object.assign(params, { brands: [...new Set(rows.map((r) => String(r.brand_id)))], from: times[0], to: times.at(-1) });
    bounds = ` AND brand_id IN {brands:Array(String)} AND ${timeColumn} BETWEEN {from:DateTime64(3, 'UTC')} AND {to:DateTime64(3, 'UTC')}`;
  }
  const present = await warehouse.rows<{ id: string }>(`SELECT toString(${idColumn}) AS id FROM ${table} WHERE ${idColumn} IN {ids:Array(String)}${bounds}`, params);
  return present.map((r) => r.id);
}

/** The batch's deduplication token: the same jobs, in any order, give the same token, so ClickHouse drops a replayed INSERT. */
export function batchToken(jobs: readonly BatchJob[]): string {
  const ids = jobs.map((j) => j.id).sort();
  return createHash('sha256').update(ids.join(',')).digest('hex');
}

/**
 * Insert: the missing rows in one INSERT carrying the batch's token, then the writer's derived
 * tables from every row (an earlier attempt may have failed after its insert, before them).
 */
export async function insert(writer: FactWriter, ctx: WriterContext, rows: { missing: FactRow[]; all: FactRow[] }, token: string): Promise<void> {
  await ctx.warehouse.insert(writer.table, rows.missing, `${writer.kind}:${token}`);
  await writer.afterInsert?.(rows.all, ctx);
}

/** Fan out: the outbound webhook events of every row, before the confirmation, so a fact that leaves the outbox has its deliveries. */
export async function fanOut(writer: FactWriter, ctx: WriterContext, rows: FactRow[]): Promise<void> {
  if (rows.length > 0) await writer.fanOut?.(rows, ctx);
}

/** Confirm: every row of the batch, written now or before, leaves the outbox (kinds accepted in Postgres). */
export async function confirm(writer: FactWriter, db: Db, rows: FactRow[]): Promise<void> {
  const outbox = outboxOf(writer);
  if (!outbox) return;
  await confirmWarehoused(db, outbox.kind, rows.map((r) => String(r[outbox.idColumn])));
}

/** Announce: tells the API processes whose facts landed, so their cached answers are read again (src/reads/changes.ts). */
export async function announce(writer: FactWriter, ctx: WriterContext, rows: FactRow[]): Promise<void> {
  const lands = writer.lands;
  if (!lands || rows.length === 0) return;
  await publishFactChanges(ctx.db, lands.area, await lands.brands(rows, ctx));
}

/** Where writeBatch reports its failures (workers/logs.ts). */
export type WriteLogs = { insertFailures: RepeatedLog; noticeFailures: RepeatedLog };

/**
 * Writes one batch through the steps in order; resolves with the rows inserted. A failure up to the
 * confirmation rejects (the jobs retry, and the retry dedupes); the batch stands written whatever
 * the announcement does.
 */
export async function writeBatch(writer: FactWriter, ctx: WriterContext, jobs: readonly BatchJob[], logs: WriteLogs): Promise<number> {
  const { kind } = writer;
  let rows: { missing: FactRow[]; all: FactRow[] } = { missing: [], all: [] };
  try {
    rows = await dedupe(writer, ctx.warehouse, jobs);
    await insert(writer, ctx, rows, batchToken(jobs));
    await fanOut(writer, ctx, rows.all);
    await confirm(writer, ctx.db, rows.all);
  } catch (err) {
    batchFailures.inc({ kind });
    logs.insertFailures.report({ err, kind, jobs: jobs.length, rows: rows.missing.length });
    throw err;
  }
  // Every row again: an earlier attempt may have written them and died before announcing.
  await announce(writer, ctx, rows.all).catch((err) => logs.noticeFailures.report({ err, kind }));
  factsWritten.inc({ kind }, rows.missing.length);
  return rows.missing.length;
}
