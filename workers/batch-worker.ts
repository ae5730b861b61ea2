import { createHash } from 'node:crypto';
import { type Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { batchFailures, factsWritten, ingestionLag } from '../src/metrics';
import type { FactJobData, FactKind, FactRow } from '../src/queues/facts';
import { backoffDelay } from '../src/queues/queues';
import type { Warehouse } from '../src/warehouse/clickhouse';

/** What a queue consumer needs to know about its fact kind. */
export type FactWriter = {
  kind: FactKind;
  /** ClickHouse table the rows go to, one INSERT per batch. */
  table: string;
  /** Optional work after the insert and before the jobs complete (e.g. derived tables). Must be idempotent. */
  afterInsert?: (rows: FactRow[], wh: Warehouse) => Promise<void>;
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
 * The insert's deduplication token is derived from the batch's job ids, so retrying
 * the same batch is dropped by ClickHouse; a replay that groups jobs differently is
 * absorbed by the tables' ReplacingMergeTree keys (every row has a deterministic id).
 */
export class BatchWorker {
  private readonly worker: Worker<FactJobData>;
  private batch: Waiting[] = [];
  private batchRows = 0;
  private timer: NodeJS.Timeout | undefined;
  private flushing = new Set<Promise<void>>();
  private readonly maxRows: number;
  private readonly maxWaitMs: number;

  constructor(
    private readonly writer: FactWriter,
    private readonly wh: Warehouse,
    connection: Redis,
    prefix: string,
    private readonly log: Logger,
  ) {
    this.maxRows = writer.maxRows ?? 20_000;
    this.maxWaitMs = writer.maxWaitMs ?? 100;
    this.worker = new Worker<FactJobData>(writer.kind, (job) => this.take(job), {
      connection,
      prefix,
      concurrency: 256,
      settings: { backoffStrategy: (attemptsMade: number) => backoffDelay(attemptsMade) },
    });
    this.worker.on('error', (err) => this.log.error({ err, kind: writer.kind }, 'worker error'));
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
    const done = this.write(batch).finally(() => this.flushing.delete(done));
    this.flushing.add(done);
  }

  private async write(batch: Waiting[]): Promise<void> {
    const { kind, table } = this.writer;
    const rows = batch.flatMap((w) => w.job.data.rows);
    const token = createHash('sha256')
      .update(
        batch
          .map((w) => w.job.id)
          .sort()
          .join(','),
      )
      .digest('hex');
    try {
      await this.wh.insert(table, rows, `${kind}:${token}`);
      await this.writer.afterInsert?.(rows, this.wh);
    } catch (err) {
      batchFailures.inc({ kind });
      this.log.warn({ err, kind, jobs: batch.length, rows: rows.length }, 'batch insert failed; jobs will retry');
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
  }
}
