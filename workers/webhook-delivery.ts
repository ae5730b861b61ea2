import { DelayedError, type Job, Worker } from 'bullmq';
import { sql } from 'kysely';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { closeAgents } from '../src/attribution/outbound-webhooks/attempt';
import { type DeliverySettings, DeliveryRunner, disableFailing } from '../src/attribution/outbound-webhooks/deliver';
import { DELIVERY_QUEUE, type DeliveryJob, type DeliveryQueue } from '../src/attribution/outbound-webhooks/queue';
import { webhookDb } from '../src/attribution/outbound-webhooks/tables';
import type { Config } from '../src/config';
import type { Db } from '../src/db/database';
import { webhookEndpoints } from '../src/metrics';
import { RepeatedLog } from '../src/repeated-log';

/** At most this many attempts in flight per endpoint (docs/webhooks.md). */
export const PER_ENDPOINT = 4;
/** Attempts in flight in one process: most are waiting on receivers, not on this CPU. */
const CONCURRENCY = 256;

export type WebhookWorkerOptions = DeliverySettings & {
  retentionDays: number;
  /** Delivery sweeper timing: pending deliveries overdue this long are queued again (their job was lost). */
  sweep?: { intervalMs?: number; overdueMs?: number } | false;
};

/**
 * The delivery consumer: one attempt per job run; a retry moves the same job to its next time.
 * Beside it, the delivery sweeper queues again pending deliveries whose job is gone (a Redis
 * loss, an add that failed), disables endpoints failing too long and purges old deliveries.
 */
export class WebhookDeliveryWorker {
  private readonly worker: Worker<DeliveryJob>;
  private readonly runner: DeliveryRunner;
  private readonly inFlight = new Map<string, number>();
  private readonly errors: RepeatedLog;
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private lastPurge = 0;

  constructor(
    private readonly db: Db,
    connection: Redis,
    prefix: string,
    private readonly queue: DeliveryQueue,
    private readonly opts: WebhookWorkerOptions,
    private readonly log: Logger,
  ) {
    this.runner = new DeliveryRunner(db, opts);
    this.errors = new RepeatedLog(log, 'warn', 'webhook delivery job failed; it will retry', { countField: 'jobs' });
    this.worker = new Worker<DeliveryJob>(DELIVERY_QUEUE, (job, token) => this.process(job, token), {
      connection,
      prefix,
      concurrency: CONCURRENCY,
      // An attempt takes up to WEBHOOK_TIMEOUT_MS: the lock outlasts it.
      lockDuration: Math.max(30_000, opts.timeoutMs * 2),
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
    const d = await this.runner.load(job.data.deliveryId);
    if (!d) return;
    const endpoint = d.endpoint_id;
    if ((this.inFlight.get(endpoint) ?? 0) >= PER_ENDPOINT && d.status === 'pending') {
      // The endpoint is busy: this job comes back shortly, without holding a slot meanwhile.
      await job.moveToDelayed(Date.now() + 100 + Math.floor(Math.random() * 400), token);
      throw new DelayedError();
    }
    this.inFlight.set(endpoint, (this.inFlight.get(endpoint) ?? 0) + 1);
    let outcome: Awaited<ReturnType<DeliveryRunner['run']>>;
    try {
      outcome = await this.runner.run(d);
    } finally {
      const n = (this.inFlight.get(endpoint) ?? 1) - 1;
      if (n <= 0) this.inFlight.delete(endpoint);
      else this.inFlight.set(endpoint, n);
    }
    if (!outcome.done) {
      await job.moveToDelayed(outcome.at.getTime(), token);
      throw new DelayedError();
    }
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
    const overdueMs = (this.opts.sweep ? this.opts.sweep.overdueMs : undefined) ?? 60_000;
    // A pending delivery whose time passed long ago has lost its job: queue it again (an id still queued is left as is).
    const overdue = await wdb
      .selectFrom('webhook_deliveries')
      .select(['id', 'next_attempt_at'])
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<', new Date(Date.now() - overdueMs))
      .orderBy('next_attempt_at')
      .limit(2000)
      .execute();
    if (overdue.length > 0) {
      await this.queue.add(overdue.map((d) => ({ id: d.id })));
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
    await this.worker.close();
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
