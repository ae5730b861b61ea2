import { createHash } from 'node:crypto';
import { type Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { batchFailures, factsWritten, ingestionLag } from '../src/metrics';
import type { Db } from '../src/db/database';
import type { FactJobData, FactKind, FactRow } from '../src/queues/facts';
import { OUTBOX_KINDS } from '../src/queues/outbox/accept';
import { confirmWarehoused, type Outbox } from '../src/queues/outbox/sweeper';
import { backoffDelay } from '../src/queues/queues';
import type { QueryParams, Warehouse } from '../src/warehouse/clickhouse';
import { type FactArea, publishFactChanges } from '../src/reads/changes';
import { RepeatedLog } from '../src/repeated-log';

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

/**
 * BullMQ's worker, asking a pacing before and after each fetch (its protected moveToActive; jobs a
 * completion takes in the same call, BullMQ's fetch-next, do not pass here).
 */
class PacedWorker extends Worker<FactJobData> {
  pacing?: { beforeFetch(): Promise<void> | undefined; afterFetch(found: boolean): void };

  protected override async moveToActive(token: string, name?: string): Promise<Job<FactJobData>> {
    let found = false;
    try {
      await this.pacing?.beforeFetch();
      // A fetch let through by a closing worker's last write would take a job after close began.
      if (this.closing) return undefined as unknown as Job<FactJobData>;
      const job = await super.moveToActive(token, name);
      found = job !== undefined;
      return job;
    } finally {
      this.pacing?.afterFetch(found);
    }
  }
}

type Waiting = { job: Job<FactJobData>; resolve(): void; reject(err: unknown): void };

/**
 * Jobs accepted before the worker's Redis connection last became ready, or this long after it
 * (the accepting process's clock may run ahead), are checked by id: a Redis that rolled back
 * (restored from an older snapshot or append-only file, or failed over to a lagging replica)
 * gives jobs already written again, as first attempts, and always after a reconnect.
 */
const RECONNECT_CHECK_MS = 5_000;
/** Ids per check query: a server takes query parameters in the URL, whose size it bounds. */
const ID_CHECK_CHUNK = 1000;

/**
 * Consumes one fact queue in batches, one INSERT each; a job completes only once ClickHouse has
 * its rows. Nothing counts twice: a dedup token from the job ids, rows of a possible replay checked
 * by id, one batch of a writer at a time (docs/ingestion.md).
 */
export class BatchWorker {
  private readonly worker: PacedWorker;
  private batch: Waiting[] = [];
  private batchRows = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The last fetch found no job (see beforeFetch). */
  private queueFoundEmpty = false;
  /** Fetches waiting for the batch in hand to be due. */
  private gate: { waiting: Promise<void>; open(): void } | undefined;
  /** The batch is due and the fetches go on until one finds the queue empty. */
  private burst = false;
  private flushing = new Set<Promise<void>>();
  /** The previous batch's write: the next one starts after it. */
  private chain: Promise<void> = Promise.resolve();
  private readonly maxRows: number;
  private readonly maxWaitMs: number;
  private readonly maxJobs: number;
  private readonly outbox: Outbox | undefined;
  /** When the Redis connection last became ready (see RECONNECT_CHECK_MS). */
  private connectedAt = Date.now();
  /**
   * When Redis loses its data (emptied, restarted without its append-only file, failed over),
   * every job in hand fails to complete with "Missing key". That is expected after such a
   * loss, so one warning a second gives the count instead of an error per job.
   */
  private readonly vanished: RepeatedLog;
  /** A ClickHouse outage fails every batch, retried with backoff: one warning a second. */
  private readonly insertFailures: RepeatedLog;
  /** Other worker errors (Redis away makes every worker report one per attempt). */
  private readonly workerErrors: RepeatedLog;
  /** A batch is written, but the notice that it landed failed: cached answers stay until their age runs out. */
  private readonly noticeFailures: RepeatedLog;

  constructor(
    private readonly writer: FactWriter,
    private readonly ctx: WriterContext,
    connection: Redis,
    prefix: string,
    log: Logger,
  ) {
    this.maxRows = writer.maxRows ?? 20_000;
    this.maxWaitMs = writer.maxWaitMs ?? 500;
    this.maxJobs = writer.maxJobs ?? 1024;
    this.outbox = outboxOf(writer);
    // The series exists from the start, so /metrics shows 0 and an alert sees the first failure.
    batchFailures.inc({ kind: writer.kind }, 0);
    this.worker = new PacedWorker(writer.kind, (job) => this.take(job), {
      connection,
      prefix,
      concurrency: 2 * this.maxJobs,
      // A worker killed mid-batch holds its jobs' locks until they expire: short locks and
      // frequent stall checks hand them to a live worker within ~15 s. Stalling is not the
      // job's fault (the batch was never acknowledged), so it may stall many times.
      lockDuration: 10_000,
      stalledInterval: 5_000,
      maxStalledCount: 100,
      settings: { backoffStrategy: (attemptsMade: number) => backoffDelay(attemptsMade) },
    });
    this.worker.pacing = this;
    this.vanished = new RepeatedLog(
      log,
      'warn',
      'jobs vanished from Redis before they completed (Redis emptied or failed over?): installs and ledger rows not yet confirmed are re-sent from the outbox; clicks not yet written are lost',
      { countField: 'jobs' },
    );
    this.insertFailures = new RepeatedLog(log, 'warn', 'batch insert failed; jobs will retry', { countField: 'batches' });
    this.workerErrors = new RepeatedLog(log, 'error', 'worker error', { countField: 'errors' });
    this.noticeFailures = new RepeatedLog(log, 'warn', 'could not announce written facts; cached answers may lag', { countField: 'batches' });
    this.worker.on('error', (err) => this.reportError(err));
    connection.on('ready', () => {
      this.connectedAt = Date.now();
    });
  }

  private reportError(err: Error): void {
    const vanished = /^Missing key for job (\S+?)\.? /.exec(err.message);
    // BullMQ may report one job more than once (each of its commands that found it missing).
    if (vanished) this.vanished.report({ kind: this.writer.kind }, vanished[1]!);
    else this.workerErrors.report({ err, kind: this.writer.kind });
  }

  private take(job: Job<FactJobData>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.batch.push({ job, resolve, reject });
      this.batchRows += job.data.rows.length;
      // A full hand is written at once: waiting out maxWaitMs would leave the worker idle.
      if (this.batchRows >= this.maxRows || this.batch.length >= this.maxJobs) this.flush();
      else if (this.batch.length === 1) this.timer = setTimeout(() => this.due(), this.maxWaitMs);
    });
  }

  /**
   * Before each fetch. Once a fetch found the queue empty, jobs arrive one by one, and fetching
   * each as it comes costs Redis round trips per job: the next fetch waits until the batch in hand
   * is due, then takes what gathered in Redis in one burst (docs/ingestion.md, "Fetching").
   */
  beforeFetch(): Promise<void> | undefined {
    if (!this.queueFoundEmpty || this.batch.length === 0 || this.burst) return undefined;
    if (!this.gate) {
      let open!: () => void;
      const waiting = new Promise<void>((resolve) => {
        open = resolve;
      });
      this.gate = { waiting, open };
    }
    return this.gate.waiting;
  }

  /** After each fetch: a burst whose fetch finds no job (or fails) ends its batch, once the jobs it fetched are in hand. */
  afterFetch(found: boolean): void {
    this.queueFoundEmpty = !found;
    // Fetched jobs reach take() in BullMQ's following microtasks; one that came later joins the next batch.
    if (!found && this.burst) setImmediate(() => this.burst && this.flush());
  }

  /** The batch's time is up: a fetch waiting at the gate goes on and its burst ends the batch; otherwise it is written now. */
  private due(): void {
    this.timer = undefined;
    if (!this.gate || this.worker.closing) {
      this.flush();
      return;
    }
    this.burst = true;
    this.openGate();
  }

  private openGate(): void {
    const gate = this.gate;
    this.gate = undefined;
    gate?.open();
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.burst = false;
    this.openGate();
    const batch = this.batch;
    if (batch.length === 0) return;
    this.batch = [];
    this.batchRows = 0;
    const done = this.chain.then(() => this.write(batch)).finally(() => this.flushing.delete(done));
    this.chain = done;
    this.flushing.add(done);
  }

  private async write(batch: Waiting[]): Promise<void> {
    const { kind, table } = this.writer;
    const token = createHash('sha256')
      .update(
        batch
          .map((w) => w.job.id)
          .sort()
          .join(','),
      )
      .digest('hex');
    let rows: FactRow[] = [];
    let all: FactRow[] = [];
    try {
      ({ missing: rows, all } = await this.rowsToWrite(batch));
      await this.ctx.warehouse.insert(table, rows, `${kind}:${token}`);
      // Every row of the batch, also those an earlier attempt wrote: that attempt may have
      // failed after its insert, before its own afterInsert or outbox confirmation.
      await this.writer.afterInsert?.(all, this.ctx);
      if (this.outbox) {
        const { kind, idColumn } = this.outbox;
        await confirmWarehoused(this.ctx.db, kind, all.map((r) => String(r[idColumn])));
      }
    } catch (err) {
      batchFailures.inc({ kind });
      this.insertFailures.report({ err, kind, jobs: batch.length, rows: rows.length });
      for (const w of batch) w.reject(err);
      return;
    }
    // Every row again: an earlier attempt may have written them and died before announcing.
    await this.announce(all);
    factsWritten.inc({ kind }, rows.length);
    const now = Date.now();
    for (const w of batch) {
      ingestionLag.observe({ kind }, (now - w.job.data.acceptedAt) / 1000);
      w.resolve();
    }
  }

  /** Tells the API processes whose facts landed; the batch stands written whatever happens here. */
  private async announce(rows: FactRow[]): Promise<void> {
    const lands = this.writer.lands;
    if (!lands || rows.length === 0) return;
    try {
      await publishFactChanges(this.ctx.db, lands.area, await lands.brands(rows, this.ctx));
    } catch (err) {
      this.noticeFailures.report({ err, kind: this.writer.kind });
    }
  }

  /** The batch's rows less duplicates (`all`), and of those the rows no earlier attempt wrote (`missing`). */
  private async rowsToWrite(batch: Waiting[]): Promise<{ missing: FactRow[]; all: FactRow[] }> {
    const idColumn = this.writer.idColumn;
    if (!idColumn) {
      const rows = batch.flatMap((w) => w.job.data.rows);
      return { missing: rows, all: rows };
    }
    const seen = new Set<string>();
    const fresh: FactRow[] = [];
    const suspect: FactRow[] = [];
    const restoredBefore = this.connectedAt + RECONNECT_CHECK_MS;
    for (const { job } of batch) {
      // A job without a known acceptance time is checked too.
      const mayHaveRun = job.attemptsStarted > 1 || job.stalledCounter > 0 || job.data.replay === true || !(job.data.acceptedAt >= restoredBefore);
      for (const row of job.data.rows) {
        const id = String(row[idColumn]);
        if (seen.has(id)) continue;
        seen.add(id);
        (mayHaveRun ? suspect : fresh).push(row);
      }
    }
    if (suspect.length === 0) return { missing: fresh, all: fresh };
    const written = new Set<string>();
    for (let i = 0; i < suspect.length; i += ID_CHECK_CHUNK) {
      for (const id of await this.writtenIds(idColumn, suspect.slice(i, i + ID_CHECK_CHUNK))) written.add(id);
    }
    return { missing: [...fresh, ...suspect.filter((r) => !written.has(String(r[idColumn])))], all: [...fresh, ...suspect] };
  }

  /** Which of these rows' ids ClickHouse has, looked up within their brands and time span when the writer names its time column. */
  private async writtenIds(idColumn: string, rows: FactRow[]): Promise<string[]> {
    const { table, timeColumn } = this.writer;
    const params: QueryParams = { ids: rows.map((r) => String(r[idColumn])) };
    let bounds = '';
    if (timeColumn) {
      // chDateTime text sorts as the times do.
      const times = rows.map((r) => String(r[timeColumn])).sort();
      Object.assign(params, { brands: [...new Set(rows.map((r) => String(r.brand_id)))], from: times[0], to: times.at(-1) });
      bounds = ` AND brand_id IN {brands:Array(String)} AND ${timeColumn} BETWEEN {from:DateTime64(3, 'UTC')} AND {to:DateTime64(3, 'UTC')}`;
    }
    const present = await this.ctx.warehouse.rows<{ id: string }>(`SELECT toString(${idColumn}) AS id FROM ${table} WHERE ${idColumn} IN {ids:Array(String)}${bounds}`, params);
    return present.map((r) => r.id);
  }

  /** Writes what is gathered now and waits for every batch under way. */
  async drain(): Promise<void> {
    this.flush();
    await Promise.allSettled([...this.flushing]);
  }

  /** Stops taking jobs, writes the batch in hand and waits for it (graceful shutdown). */
  async close(): Promise<void> {
    const closing = this.worker.close();
    // Jobs already taken are waiting on the batch timer: write them now.
    await this.drain();
    await closing;
    await this.drain();
    this.vanished.flush();
    this.insertFailures.flush();
    this.workerErrors.flush();
    this.noticeFailures.flush();
  }
}
