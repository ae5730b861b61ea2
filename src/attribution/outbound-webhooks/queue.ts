import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { queueDepth, queueOldestWaiting } from '../../metrics';
import type { QueueState } from '../../queues/queues';

/**
 * The BullMQ queue of deliveries: a job per delivery, its id the delivery's, its data that id and
 * its endpoint's (which never changes), so a job waits for its endpoint's turn before any read.
 */
export const DELIVERY_QUEUE = 'webhooks';

export type DeliveryJob = { deliveryId: string; endpointId?: string };

/**
 * Completed and failed jobs are removed, so a delivery's id can be queued again (a replay, the
 * sweeper after a Redis loss); a delivery's state lives in Postgres, never in the job.
 */
export const DELIVERY_JOB_OPTIONS = {
  removeOnComplete: true,
  removeOnFail: true,
  attempts: 10,
  backoff: { type: 'exponential', delay: 1000 },
} as const;

export class DeliveryQueue {
  readonly queue: Queue<DeliveryJob>;

  constructor(
    private readonly connection: Redis,
    prefix: string,
  ) {
    this.queue = new Queue<DeliveryJob>(DELIVERY_QUEUE, { connection, prefix, defaultJobOptions: DELIVERY_JOB_OPTIONS });
    // The connection's own listener reports its errors.
    this.queue.on('error', () => {});
  }

  /** Queues deliveries; an id already queued is left as it is (BullMQ keeps one job per id). */
  async add(deliveries: { id: string; endpointId?: string; at?: Date | null }[]): Promise<void> {
    if (deliveries.length === 0) return;
    const now = Date.now();
    const jobs = deliveries.map((d) => ({
      name: 'deliver',
      data: d.endpointId ? { deliveryId: d.id, endpointId: d.endpointId } : { deliveryId: d.id },
      opts: { jobId: d.id, delay: d.at ? Math.max(0, d.at.getTime() - now) : 0 },
    }));
    for (let i = 0; i < jobs.length; i += 500) await this.queue.addBulk(jobs.slice(i, i + 500));
  }

  readonly name = DELIVERY_QUEUE;

  /** Job counts and the age of the oldest waiting job (no consumer takes it), for /healthz and /metrics. */
  async state(): Promise<QueueState> {
    const counts = await this.queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
    for (const [state, n] of Object.entries(counts)) queueDepth.set({ queue: DELIVERY_QUEUE, state }, n);
    const [waiting, open] = await Promise.all([this.oldest(['wait', 'prioritized']), this.oldest(['wait', 'prioritized', 'active', 'delayed'])]);
    const now = Date.now();
    const age = (at: number | null) => (at === null ? 0 : Math.max(0, (now - at) / 1000));
    const oldestWaitingSeconds = age(waiting);
    queueOldestWaiting.set({ queue: DELIVERY_QUEUE }, oldestWaitingSeconds);
    return { counts, oldestWaitingSeconds, oldestOpenSeconds: age(open) };
  }

  /** When the oldest job of these states was added (ms), or null; reads ids and timestamps only. */
  private async oldest(states: ('wait' | 'prioritized' | 'active' | 'delayed')[]): Promise<number | null> {
    const ids = await this.queue.getRanges(states, 0, 0, true);
    const stamps = await Promise.all(ids.map((id) => this.connection.hget(this.queue.toKey(id), 'timestamp')));
    const known = stamps.filter((t) => t !== null).map(Number);
    return known.length ? Math.min(...known) : null;
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
