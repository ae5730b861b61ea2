import { DelayedError, type Job, Worker } from 'bullmq';
import { sql } from 'kysely';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { closeAgents } from '../src/attribution/outbound-webhooks/attempt';
import { type DeliverySettings, DeliveryRunner, disableFailing } from '../src/attribution/outbound-webhooks/deliver';
import { EndpointLeases, type Lease } from '../src/attribution/outbound-webhooks/endpoint-leases';
import { DELIVERY_QUEUE, type DeliveryJob, type DeliveryQueue, deliveriesOf, type QueuedDelivery } from '../src/attribution/outbound-webhooks/queue';
import { DELIVERY_ERRORS, webhookDb } from '../src/attribution/outbound-webhooks/tables';
import type { Config } from '../src/config';
import type { Db } from '../src/db/database';
import { webhookAttempts, webhookEndpoints } from '../src/metrics';
import { RepeatedLog } from '../src/repeated-log';
import { closeWorker } from './close-worker';

/** At most this many attempts in flight per endpoint, in this process and across all of them (docs/webhooks.md). */
export const PER_ENDPOINT = 4;
/** Lanes of one endpoint waiting here for a turn; a job beyond them is put back in the queue for a moment. */
const WAITING_PER_ENDPOINT = 8;
/** An endpoint answering within this (ms, on average) may keep 4x as many waiting: they pass quickly. */
const FAST_MS = 250;
/** Jobs run at once in one process, each up to PER_ENDPOINT attempts: most wait on receivers, not on this CPU. */
const CONCURRENCY = 128;

export type WebhookWorkerOptions = DeliverySettings & {
  retentionDays: number;
  /** Delivery sweeper timing: pending deliveries overdue this long are queued again (their job was lost). */
  sweep?: { intervalMs?: number; overdueMs?: number } | false;
};

/**
 * The delivery consumer: a job run makes the next attempt of each delivery it carries; a retry
 * moves a delivery's own job to its next time, and leaves a batch's job as a job of its own.
 * Beside it, the delivery sweeper queues again pending deliveries whose job is gone (a Redis
 * loss, an add that failed), disables endpoints failing too long and purges old deliveries.
 */
export class WebhookDeliveryWorker {
  private readonly worker: Worker<DeliveryJob>;
  private readonly runner: DeliveryRunner;
  private readonly leases: EndpointLeases;
  /** Per endpoint: lanes holding a turn (at most PER_ENDPOINT) and the lanes waiting for one. */
  private readonly limits = new Map<string, { running: number; waiting: (() => void)[] }>();
  /** Per endpoint: its attempts' recent duration (ms, moving average), to time a job put back. */
  private readonly durations = new Map<string, number>();
  private readonly errors: RepeatedLog;
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private lastPurge = 0;
  /** Jobs being run here: close waits for them. */
  private readonly inHand = new Set<Promise<void>>();

  constructor(
    private readonly db: Db,
    connection: Redis,
    prefix: string,
    private readonly queue: DeliveryQueue,
    private readonly opts: WebhookWorkerOptions,
    private readonly log: Logger,
  ) {
    this.runner = new DeliveryRunner(db, opts);
    // A lease outlives any attempt (its timeout), so only a dead process's are ever left to expire.
    this.leases = new EndpointLeases(connection, prefix, { limit: PER_ENDPOINT, ttlMs: opts.timeoutMs + 30_000 });
    // Every outcome's series exists from the start, so an alert sees the first failure.
    for (const outcome of ['success', ...DELIVERY_ERRORS.filter((e) => e !== 'endpoint_disabled')]) webhookAttempts.inc({ outcome }, 0);
    this.errors = new RepeatedLog(log, 'warn', 'webhook delivery job failed; it will retry', { countField: 'jobs' });
    this.worker = new Worker<DeliveryJob>(DELIVERY_QUEUE, (job, token) => this.track(this.process(job, token)), {
      connection,
      prefix,
      concurrency: CONCURRENCY,
      // The lock is renewed while an attempt runs; a process killed mid-attempt gives its jobs back
      // within ~15 s (an attempt may then be made twice: deliveries are at least once).
      lockDuration: 10_000,
      stalledInterval: 5_000,
      maxStalledCount: 100,
    });
    this.worker.on('error', (err) => this.errors.report({ err }));
    this.worker.on('failed', (_job, err) => this.errors.report({ err }));
    if (opts.sweep !== false) {
      const every = opts.sweep?.intervalMs ?? 5000;
      this.sweepTimer = setInterval(() => void this.sweep(), every);
      void this.sweep();
    }
  }

  private async process(job: Job<DeliveryJob>, token?: string): Promise<void> {
    const ids = deliveriesOf(job.data);
    // A job queued without its endpoint (before the endpoint was in its data) reads it first.
    const endpointId = job.data.endpointId ?? (ids[0] === undefined ? undefined : (await this.runner.load(ids[0]))?.endpoint_id);
    if (!endpointId) return;
    const slot = this.slot(endpointId);
    const fast = (this.durations.get(endpointId) ?? FAST_MS) < FAST_MS;
    if (slot.running >= PER_ENDPOINT && slot.waiting.length >= (fast ? 4 * WAITING_PER_ENDPOINT : WAITING_PER_ENDPOINT)) {
      // A busy endpoint holds a bounded share of this worker's slots; the rest come back about
      // when a turn should be free (a fast receiver's in tens of ms, a hanging one's in 1-3 s).
      await job.moveToDelayed(Date.now() + this.backOff(endpointId, slot.running + slot.waiting.length), token);
      throw new DelayedError();
    }
    // Up to PER_ENDPOINT lanes, each holding a turn of the endpoint while it attempts deliveries one by one.
    const left = [...ids];
    const retries: QueuedDelivery[] = [];
    const lane = () =>
      this.inTurn(endpointId, async (lease) => {
        for (let id = left.shift(); id !== undefined; id = left.shift()) {
          await lease.renew();
          // Read in the turn: the delivery may have ended meanwhile (a 410, the endpoint disabled).
          // The reads of concurrent lanes share a statement.
          const d = await this.runner.load(id);
          if (!d) continue;
          const t0 = performance.now();
          const outcome = await this.runner.run(d);
          this.took(endpointId, performance.now() - t0);
          if (!outcome.done) retries.push({ id, endpointId, at: outcome.at });
        }
      });
    await Promise.all(Array.from({ length: Math.min(PER_ENDPOINT, left.length) }, lane));
    if (retries.length === 0) return;
    // A delivery's own job moves to its next time; a batch's retries are queued as jobs of their own.
    if (job.id === retries[0]!.id && ids.length === 1) {
      await job.moveToDelayed(retries[0]!.at!.getTime(), token);
      throw new DelayedError();
    }
    await this.queue.add(retries);
  }

  private track(run: Promise<void>): Promise<void> {
    this.inHand.add(run);
    const untrack = () => this.inHand.delete(run);
    run.then(untrack, untrack);
    return run;
  }

  private slot(endpointId: string) {
    const slot = this.limits.get(endpointId) ?? { running: 0, waiting: [] as (() => void)[] };
    this.limits.set(endpointId, slot);
    return slot;
  }

  /**
   * Runs `work` holding one of the endpoint's turns: one of PER_ENDPOINT in this process (waiting
   * in line for it), then one of its leases in Redis, which counts the turns of every process.
   */
  private async inTurn(endpointId: string, work: (lease: Lease) => Promise<void>): Promise<void> {
    const slot = this.slot(endpointId);
    if (slot.running >= PER_ENDPOINT) await new Promise<void>((resolve) => slot.waiting.push(resolve));
    else slot.running++;
    try {
      const lease = await this.leases.hold(endpointId);
      try {
        await work(lease);
      } finally {
        await lease.giveBack();
      }
    } finally {
      // The turn passes to the next lane waiting for this endpoint, or is given back.
      const next = slot.waiting.shift();
      if (next) next();
      else if (--slot.running === 0) this.limits.delete(endpointId);
    }
  }

  private took(endpointId: string, ms: number): void {
    const avg = this.durations.get(endpointId);
    if (avg === undefined && this.durations.size >= 10_000) this.durations.clear();
    this.durations.set(endpointId, avg === undefined ? ms : avg * 0.8 + ms * 0.2);
  }

  /** How long a job put back waits: the endpoint's queued attempts at its pace, 25-50 ms to 1.5-3 s. */
  private backOff(endpointId: string, queued: number): number {
    const avg = this.durations.get(endpointId) ?? 1000;
    const wait = Math.min(1500, Math.max(25, (avg * queued) / PER_ENDPOINT));
    return Math.round(wait * (1 + Math.random()));
  }

  /** One sweep: never two at once. */
  sweep(): Promise<void> {
    this.sweeping ??= this.sweepOnce()
      .catch((err) => this.log.warn({ err }, 'webhook delivery sweep failed'))
      .finally(() => {
        this.sweeping = undefined;
      });
    return this.sweeping;
  }

  private async sweepOnce(): Promise<void> {
    const wdb = webhookDb(this.db);
    const overdueMs = (this.opts.sweep ? this.opts.sweep.overdueMs : undefined) ?? 30_000;
    // A pending delivery whose time passed long ago has lost its job: queue it again under the job's
    // id (a job still queued is left as is; a batch's job comes back with the deliveries still pending).
    const overdue = await wdb
      .selectFrom('webhook_deliveries')
      .select(['id', 'endpoint_id', 'job_id', 'next_attempt_at'])
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<', new Date(Date.now() - overdueMs))
      .orderBy('next_attempt_at')
      .limit(2000)
      .execute();
    if (overdue.length > 0) {
      await this.queue.add(overdue.map((d) => ({ id: d.id, endpointId: d.endpoint_id, jobId: d.job_id })));
      this.log.debug({ deliveries: overdue.length }, 'overdue webhook deliveries queued again');
    }
    await disableFailing(wdb, this.opts.disableAfterHours);
    const { rows } = await sql<{ status: string; n: number }>`
      SELECT CASE WHEN disabled_at IS NOT NULL THEN 'disabled' WHEN failing_since IS NOT NULL THEN 'failing' ELSE 'active' END AS status, count(*)::int AS n
      FROM webhook_endpoints GROUP BY 1`.execute(this.db);
    for (const status of ['active', 'failing', 'disabled']) webhookEndpoints.set({ status }, rows.find((r) => r.status === status)?.n ?? 0);
    if (Date.now() - this.lastPurge > 10 * 60_000) {
      this.lastPurge = Date.now();
      await sql`DELETE FROM webhook_deliveries WHERE created_at < now() - make_interval(days => ${this.opts.retentionDays}) AND status <> 'pending'`.execute(this.db);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweepTimer);
    await closeWorker(this.worker, async () => {
      while (this.inHand.size > 0) await Promise.allSettled([...this.inHand]);
    });
    await this.sweeping;
    this.errors.flush();
    closeAgents();
  }
}

/** The delivery worker's settings from the configuration (WEBHOOK_*). */
export function webhookWorkerOptions(config: Config): WebhookWorkerOptions {
  const w = config.webhooks;
  return {
    timeoutMs: w.timeoutMs,
    retrySchedule: w.retrySchedule,
    disableAfterHours: w.disableAfterHours,
    retentionDays: w.retentionDays,
    secretKey: config.secretKey,
    rules: { requireHttps: w.requireHttps, allowedNetworks: w.allowedNetworks, publicBaseUrl: config.publicBaseUrl, dnsServers: config.dnsServers },
  };
}
