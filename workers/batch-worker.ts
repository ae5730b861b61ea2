import { type Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { batchFailures, ingestionLag } from '../src/metrics';
import type { FactJobData } from '../src/queues/facts';
import { backoffDelay } from '../src/queues/queues';
import { closeWorker } from './close-worker';
import { type BatchLogs, batchLogs } from './logs';
import { type BatchJob, type FactWriter, outboxOf, type WriterContext, writeBatch } from './write';

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

/**
 * The consumer of one fact queue: takes jobs, holds their promises until their batch is written
 * (workers/write.ts: dedupe, insert, fan out, confirm, announce), paces its fetches. A job
 * completes only once ClickHouse has its rows; one batch of a writer at a time (docs/ingestion.md).
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
  /** When the Redis connection last became ready (see RECONNECT_CHECK_MS). */
  private connectedAt = Date.now();
  private readonly logs: BatchLogs;

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
    // A writer whose outbox cannot be confirmed fails here, at start.
    outboxOf(writer);
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
    this.logs = batchLogs(log);
    this.worker.on('error', (err) => this.reportError(err));
    connection.on('ready', () => {
      this.connectedAt = Date.now();
    });
  }

  private reportError(err: Error): void {
    const vanished = /^Missing key for job (\S+?)\.? /.exec(err.message);
    // BullMQ may report one job more than once (each of its commands that found it missing).
    if (vanished) this.logs.vanished.report({ kind: this.writer.kind }, vanished[1]!);
    else this.logs.workerErrors.report({ err, kind: this.writer.kind });
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

  /** Writes the batch (workers/write.ts), then completes its jobs, or fails them to retry. */
  private async write(batch: Waiting[]): Promise<void> {
    const restoredBefore = this.connectedAt + RECONNECT_CHECK_MS;
    const jobs: BatchJob[] = batch.map(({ job }) => ({
      id: job.id!,
      rows: job.data.rows,
      // A job without a known acceptance time is checked too.
      mayHaveRun: job.attemptsStarted > 1 || job.stalledCounter > 0 || job.data.replay === true || !(job.data.acceptedAt >= restoredBefore),
    }));
    try {
      await writeBatch(this.writer, this.ctx, jobs, this.logs);
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    const now = Date.now();
    for (const w of batch) {
      ingestionLag.observe({ kind: this.writer.kind }, (now - w.job.data.acceptedAt) / 1000);
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
    // Jobs already taken wait on the batch timer: written now, and those a late fetch brought once the close is done.
    await closeWorker(this.worker, () => this.drain());
    await this.drain();
    this.logs.flush();
  }
}
