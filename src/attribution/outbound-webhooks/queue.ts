import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { queueDepth, queueOldestWaiting } from '../../metrics';
import type { QueueState } from '../../queues/queues';

/**
 * The BullMQ queue of deliveries: a job carries one endpoint's deliveries (the fan-out's batch, up
 * to JOB_DELIVERIES; a retry, a replay or a test alone, its id then the delivery's) and names the
 * endpoint, so a job waits for the endpoint's turn before any read.
 */
export const DELIVERY_QUEUE = 'webhooks';

/** Deliveries of one endpoint in one job: one job's Redis work for them all. */
export const JOB_DELIVERIES = 100;

/** `deliveryId`: a job queued before jobs carried batches. */
export type DeliveryJob = { endpointId?: string; deliveryIds?: string[]; deliveryId?: string };

/** A delivery to queue: its endpoint, its job (undefined or null: its own) and when it is due. */
export type QueuedDelivery = { id: string; endpointId: string; jobId?: string | null; at?: Date | null };

/** The deliveries a job carries. */
export const deliveriesOf = (job: DeliveryJob): string[] => job.deliveryIds ?? (job.deliveryId ? [job.deliveryId] : []);

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

  /**
   * Queues deliveries, a job per job id (a delivery's own when it has none); a job id already
   * queued is left as it is (BullMQ keeps one job per id), so queuing again never doubles a job.
   */
  async add(deliveries: QueuedDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    const jobs = new Map<string, { endpointId: string; ids: string[]; at: number }>();
    for (const d of deliveries) {
      const jobId = d.jobId ?? d.id;
      const job = jobs.get(jobId) ?? { endpointId: d.endpointId, ids: [], at: 0 };
      job.ids.push(d.id);
      job.at = Math.max(job.at, d.at?.getTime() ?? 0);
      jobs.set(jobId, job);
    }
    const now = Date.now();
    const bulk = [...jobs].map(([jobId, job]) => ({
      name: 'deliver',
      data: { endpointId: job.endpointId, deliveryIds: job.ids },
      opts: { jobId, delay: Math.max(0, job.at - now) },
    }));
    for (let i = 0; i < bulk.length; i += 500) await this.queue.addBulk(bulk.slice(i, i + 500));
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
