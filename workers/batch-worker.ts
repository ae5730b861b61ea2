import { createHash } from 'node:crypto';
import { type Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { batchFailures, factsWritten, ingestionLag } from '../src/metrics';
import type { FactJobData, FactKind, FactRow } from '../src/queues/facts';
import { backoffDelay } from '../src/queues/queues';
import type { Db } from '../src/db/database';
import type { Warehouse } from '../src/warehouse/clickhouse';
import { RepeatedLog } from '../src/repeated-log';

/** What a writer's hooks may use. */
export type WriterContext = { warehouse: Warehouse; db: Db };

/** What a queue consumer needs to know about its fact kind. */
export type FactWriter = {
  kind: FactKind;
  /** ClickHouse table the rows go to, one INSERT per batch. */
  table: string;
  /**
   * The row's unique id column, for tables where a row must never be counted twice
   * (clicks, installs, ledger). Rows of a job that may have run before are checked
   * against the table and only the missing ones inserted. Tables whose key replaces
   * (placements, snapshots) leave it out: a replay there is harmless by construction.
   */
  idColumn?: string;
  /** Optional work on every row of the batch after the insert, before the jobs complete (derived tables, outbox marks). Must be idempotent. */
  afterInsert?: (rows: FactRow[], ctx: WriterContext) => Promise<void>;
  maxRows?: number;
  maxWaitMs?: number;
};

type Waiting = { job: Job<FactJobData>; resolve(): void; reject(err: unknown): void };

/**
 * Consumes one fact queue in batches: jobs taken concurrently wait in `batch` until
 * enough rows or time has gathered, then all of them are written with one INSERT.
 * A job completes only after ClickHouse acknowledged that insert; if it fails, every
 * job of the batch fails and BullMQ retries it with backoff.
 *
 * Nothing is counted twice: the insert's deduplication token is derived from the
 * batch's job ids, so retrying the same batch is dropped by ClickHouse; a job that
 * may already have been written (a retry, a job taken back from a dead worker, or a
 * re-enqueue marked `replay`) has its rows checked by id and only the missing ones
 * are inserted; duplicates inside a batch are dropped; and batches of one writer are
 * written one after another, so a check never races an insert of the same process.
 */
export class BatchWorker {
  private readonly worker: Worker<FactJobData>;
  private batch: Waiting[] = [];
  private batchRows = 0;
  private timer: NodeJS.Timeout | undefined;
  private flushing = new Set<Promise<void>>();
  /** The previous batch's write: the next one starts after it. */
  private chain: Promise<void> = Promise.resolve();
  private readonly maxRows: number;
  private readonly maxWaitMs: number;
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

  constructor(
    private readonly writer: FactWriter,
    private readonly ctx: WriterContext,
    connection: Redis,
    prefix: string,
    log: Logger,
  ) {
    this.maxRows = writer.maxRows ?? 20_000;
    this.maxWaitMs = writer.maxWaitMs ?? 500;
    this.worker = new Worker<FactJobData>(writer.kind, (job) => this.take(job), {
      connection,
      prefix,
      concurrency: 256,
      // A worker killed mid-batch holds its jobs' locks until they expire: short locks and
      // frequent stall checks hand them to a live worker within ~15 s. Stalling is not the
      // job's fault (the batch was never acknowledged), so it may stall many times.
      lockDuration: 10_000,
      stalledInterval: 5_000,
      maxStalledCount: 100,
      settings: { backoffStrategy: (attemptsMade: number) => backoffDelay(attemptsMade) },
    });
    this.vanished = new RepeatedLog(
      log,
      'warn',
      'jobs vanished from Redis before they completed (Redis emptied or failed over?): installs and ledger rows not yet confirmed are re-sent from the outbox; clicks not yet written are lost',
      { countField: 'jobs' },
    );
    this.insertFailures = new RepeatedLog(log, 'warn', 'batch insert failed; jobs will retry', { countField: 'batches' });
    this.workerErrors = new RepeatedLog(log, 'error', 'worker error', { countField: 'errors' });
    this.worker.on('error', (err) => this.reportError(err));
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
      if (this.batchRows >= this.maxRows) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.maxWaitMs);
    });
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
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
    try {
      const { missing, all } = await this.rowsToWrite(batch);
      rows = missing;
      await this.ctx.warehouse.insert(table, rows, `${kind}:${token}`);
      // Every row of the batch, also those an earlier attempt wrote: that attempt may have
      // failed after its insert, before its own afterInsert (e.g. marking the outbox).
      await this.writer.afterInsert?.(all, this.ctx);
    } catch (err) {
      batchFailures.inc({ kind });
      this.insertFailures.report({ err, kind, jobs: batch.length, rows: rows.length });
      for (const w of batch) w.reject(err);
      return;
    }
    factsWritten.inc({ kind }, rows.length);
    const now = Date.now();
    for (const w of batch) {
      ingestionLag.observe({ kind }, (now - w.job.data.acceptedAt) / 1000);
      w.resolve();
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
    for (const { job } of batch) {
      const mayHaveRun = job.attemptsStarted > 1 || job.stalledCounter > 0 || job.data.replay === true;
      for (const row of job.data.rows) {
        const id = String(row[idColumn]);
        if (seen.has(id)) continue;
        seen.add(id);
        (mayHaveRun ? suspect : fresh).push(row);
      }
    }
    if (suspect.length === 0) return { missing: fresh, all: fresh };
    const present = await this.ctx.warehouse.rows<{ id: string }>(
      `SELECT toString(${idColumn}) AS id FROM ${this.writer.table} WHERE ${idColumn} IN {ids:Array(String)}`,
      { ids: suspect.map((r) => String(r[idColumn])) },
    );
    const written = new Set(present.map((r) => r.id));
    return { missing: [...fresh, ...suspect.filter((r) => !written.has(String(r[idColumn])))], all: [...fresh, ...suspect] };
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
  }
}
