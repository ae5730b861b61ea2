import { randomUUID } from 'node:crypto';
import { type JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { queueAddFailures, queueDepth, queueOldestWaiting } from '../metrics';
import { FACT_KINDS, type FactJobData, type FactKind, type FactRow, type RowsByKind } from './facts';

/**
 * Retries back off exponentially to one minute and go on for about a day: a job is
 * only complete once ClickHouse has its rows, so an outage delays facts, never drops
 * them. A job that still fails stays in the failed set for an operator (bull-board).
 */
export const JOB_OPTIONS: JobsOptions = {
  attempts: 1500,
  backoff: { type: 'capped' },
  removeOnComplete: { age: 3600, count: 5000 },
  removeOnFail: false,
};

export function backoffDelay(attemptsMade: number): number {
  return Math.min(60_000, 250 * 2 ** Math.min(attemptsMade, 10));
}

/**
 * A job of rows, with a random id: Redis's counter restarts at 1 after a data loss, and a reused
 * id would make ClickHouse drop a new batch as a replay (tokens come from the job ids).
 */
function factJob(kind: FactKind, data: FactJobData) {
  return { name: kind, data, opts: { jobId: randomUUID() } };
}

/**
 * Adds are group-committed per kind: a kind's rows leave as soon as its previous add is back from
 * Redis, and rows arriving meanwhile go together in the next job. Clicks, whose answers wait for
 * their add, leave at once when nothing is in flight (no window: docs/benchmarks.md, "Changes
 * measured"); outbox kinds (answered before their add) first gather 100 ms, against the workers' 500 ms.
 */
const LINGER_MS: Record<FactKind, number> = {
  clicks: 0,
  placements: 0,
  placement_metrics: 0,
  installs: 100,
  ledger: 100,
  creators: 100,
};

/** How long a kind's rows gather before they may leave; 0: the rest of this event-loop turn only. */
export function lingerMs(kind: FactKind): number {
  return LINGER_MS[kind];
}
const MAX_ROWS_PER_JOB = 2000;

export type QueueState = { counts: Record<string, number>; oldestWaitingSeconds: number; oldestOpenSeconds: number };

type Pending = { rows: FactRow[]; waiters: { resolve(): void; reject(e: unknown): void }[]; lingering: boolean };

/**
 * The producer side of the fact queues. `add` resolves once the rows are in Redis,
 * which is when a request may answer "accepted". `Rows` gives each kind its row type.
 */
export class FactQueues<Rows extends RowsByKind = RowsByKind> {
  readonly queues: Record<FactKind, Queue<FactJobData>>;
  private pending = new Map<FactKind, Pending>();
  /** Kinds whose add is on its way to Redis: the next waits for it. */
  private adding = new Set<FactKind>();
  private inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly connection: Redis,
    prefix: string,
  ) {
    this.queues = Object.fromEntries(
      FACT_KINDS.map((kind) => {
        const queue = new Queue<FactJobData>(kind, { connection, prefix, defaultJobOptions: JOB_OPTIONS });
        // BullMQ repeats the connection's errors here; the connection's own listener logs them (services.ts).
        queue.on('error', () => {});
        // Every kind's series exists from the start, so /metrics shows 0 and an alert sees the first failures.
        queueAddFailures.inc({ kind }, 0);
        return [kind, queue];
      }),
    ) as Record<FactKind, Queue<FactJobData>>;
  }

  /** Re-queues rows that may already be in ClickHouse (outbox sweeps): the worker checks them by id. */
  addReplay<K extends FactKind>(kind: K, rows: Rows[K][]): Promise<void> {
    return this.addJobs(kind, rows, true);
  }

  /** Queues rows for ClickHouse. Adds from concurrent requests are coalesced into one job. */
  add<K extends FactKind>(kind: K, rows: Rows[K][]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    if (rows.length >= MAX_ROWS_PER_JOB) return this.track(this.addJobs(kind, rows));
    return new Promise<void>((resolve, reject) => {
      let p = this.pending.get(kind);
      if (!p) {
        p = { rows: [], waiters: [], lingering: true };
        this.pending.set(kind, p);
        const gathered = p;
        const linger = () => {
          gathered.lingering = false;
          this.flushWhenFree(kind);
        };
        const ms = lingerMs(kind);
        // unref: a gathering never holds the process open; drain() flushes it on shutdown.
        if (ms > 0) setTimeout(linger, ms).unref();
        else setImmediate(linger);
      }
      for (const row of rows) p.rows.push(row);
      p.waiters.push({ resolve, reject });
      if (p.rows.length >= MAX_ROWS_PER_JOB) this.flush(kind);
    });
  }

  /** Sends the gathered rows unless they still linger or the kind's previous add is under way (it sends them when done). */
  private flushWhenFree(kind: FactKind): void {
    const p = this.pending.get(kind);
    if (p && !p.lingering && !this.adding.has(kind)) this.flush(kind);
  }

  private flush(kind: FactKind): void {
    const p = this.pending.get(kind);
    if (!p) return;
    this.pending.delete(kind);
    this.adding.add(kind);
    this.track(
      this.addJobs(kind, p.rows)
        .then(
          () => {
            for (const w of p.waiters) w.resolve();
          },
          (err) => {
            for (const w of p.waiters) w.reject(err);
          },
        )
        .finally(() => {
          this.adding.delete(kind);
          this.flushWhenFree(kind);
        }),
    );
  }

  /** Rows as jobs of up to MAX_ROWS_PER_JOB. One job is added as such: addBulk builds an ioredis pipeline, which costs more than the add itself. */
  private async addJobs(kind: FactKind, rows: FactRow[], replay = false): Promise<void> {
    const acceptedAt = Date.now();
    const jobs = [];
    for (let i = 0; i < rows.length; i += MAX_ROWS_PER_JOB) {
      jobs.push(factJob(kind, { rows: rows.slice(i, i + MAX_ROWS_PER_JOB), acceptedAt, ...(replay ? { replay } : {}) }));
    }
    try {
      // On the request path (no offline queue) a queue that never reached Redis (started while
      // Redis was away) would wait for it: fail now instead.
      if (!this.connection.options.enableOfflineQueue && this.connection.status !== 'ready') {
        throw new Error('Redis unavailable: the connection is not ready');
      }
      if (jobs.length === 1) await this.queues[kind].add(jobs[0]!.name, jobs[0]!.data, jobs[0]!.opts);
      else await this.queues[kind].addBulk(jobs);
    } catch (err) {
      queueAddFailures.inc({ kind }, rows.length);
      throw err;
    }
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    p.finally(() => this.inFlight.delete(p)).catch(() => {});
    return p;
  }

  /** Waits until every accepted row is in Redis (graceful shutdown). */
  async drain(): Promise<void> {
    for (const kind of [...this.pending.keys()]) this.flush(kind);
    await Promise.allSettled([...this.inFlight]);
  }

  async counts(): Promise<Record<FactKind, Record<string, number>>> {
    const entries = await Promise.all(
      FACT_KINDS.map(async (kind) => {
        const c = await this.queues[kind].getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
        for (const [state, n] of Object.entries(c)) queueDepth.set({ queue: kind, state }, n);
        return [kind, c] as const;
      }),
    );
    return Object.fromEntries(entries) as Record<FactKind, Record<string, number>>;
  }

  /**
   * Each queue's job counts and the ages, in seconds, of its oldest waiting job (no consumer takes
   * them) and oldest unfinished one (its lag); sets the gauges of /metrics. Reads ids and timestamps,
   * never job data.
   */
  async state(): Promise<Record<FactKind, QueueState>> {
    const counts = await this.counts();
    const now = Date.now();
    const entries = await Promise.all(
      FACT_KINDS.map(async (kind) => {
        const [waiting, open] = await Promise.all([
          this.oldest(kind, ['wait', 'prioritized']),
          this.oldest(kind, ['wait', 'prioritized', 'active', 'delayed']),
        ]);
        const oldestWaitingSeconds = waiting === null ? 0 : Math.max(0, (now - waiting) / 1000);
        queueOldestWaiting.set({ queue: kind }, oldestWaitingSeconds);
        const state: QueueState = {
          counts: counts[kind],
          oldestWaitingSeconds,
          oldestOpenSeconds: open === null ? 0 : Math.max(0, (now - open) / 1000),
        };
        return [kind, state] as const;
      }),
    );
    return Object.fromEntries(entries) as Record<FactKind, QueueState>;
  }

  /** When the oldest job of these states was added (ms), or null when they hold none. */
  private async oldest(kind: FactKind, states: ('wait' | 'prioritized' | 'active' | 'delayed')[]): Promise<number | null> {
    const queue = this.queues[kind];
    const ids = await queue.getRanges(states, 0, 0, true);
    const stamps = await Promise.all(ids.map((id) => this.connection.hget(queue.toKey(id), 'timestamp')));
    const known = stamps.filter((t) => t !== null).map(Number);
    return known.length ? Math.min(...known) : null;
  }

  async close(): Promise<void> {
    await this.drain();
    await Promise.all(Object.values(this.queues).map((q) => q.close()));
  }
}
