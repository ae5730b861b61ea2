import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Config } from '../src/config';
import type { Db } from '../src/db/database';
import { setWorkerThreadMetrics } from '../src/metrics';
import { createRedis } from '../src/queues/redis';
import type { Warehouse } from '../src/warehouse/clickhouse';
import { BatchWorker } from './batch-worker';
import { type SweeperOptions, startOutboxSweeper } from '../src/queues/outbox/sweeper';
import type { ThreadMessage } from './thread-protocol';
import type { FactRow } from '../src/queues/facts';
import { FACT_WRITERS, OUTBOXES } from './writers';
import { fanOut } from './write';
import { WebhookFanOut } from '../src/attribution/outbound-webhooks/fan-out';
import { DeliveryQueue } from '../src/attribution/outbound-webhooks/queue';
import { WebhookDeliveryWorker, type WebhookWorkerOptions } from './webhook-delivery';

export type Workers = { drain(): Promise<void>; close(): Promise<void> };

export type WorkerOptions = {
  redisUrl: string;
  prefix: string;
  warehouse: Warehouse;
  db: Db;
  log: Logger;
  /** Outbox sweeper timing (default: at start, then every 5 s; rows unconfirmed for 10 s, or recorded before the start); false: no sweeper. */
  sweeper?: (SweeperOptions & { intervalMs?: number }) | false;
  /** Outbound webhook delivery (webhookWorkerOptions(config)); without it facts still make deliveries, which wait for a process that sends. */
  webhooks?: WebhookWorkerOptions;
};

/**
 * Starts one batch worker per fact kind on a dedicated Redis connection, and the outbox
 * sweeper, which queues again the facts accepted in Postgres that ClickHouse has not confirmed.
 */
export function startWorkers(opts: WorkerOptions): Workers {
  const connection = createRedis(opts.redisUrl, 'worker');
  // Deliveries are queued on a connection of their own, as the sweeper's facts are.
  const deliveryRedis = createRedis(opts.redisUrl);
  const deliveryQueue = new DeliveryQueue(deliveryRedis, opts.prefix);
  const ctx = { warehouse: opts.warehouse, db: opts.db, webhooks: new WebhookFanOut(opts.db, deliveryQueue, opts.log) };
  const workers = FACT_WRITERS.map((w) => new BatchWorker(w, ctx, connection, opts.prefix, opts.log));
  // The sweeper's confirmations fan out as the writers' own do (the same step, workers/write.ts).
  const outboxes = OUTBOXES.map((o) => {
    const writer = FACT_WRITERS.find((w) => w.kind === o.kind);
    return writer?.fanOut ? { ...o, afterWarehoused: (facts: FactRow[]) => fanOut(writer, ctx, facts) } : o;
  });
  const sweeper =
    opts.sweeper === false
      ? undefined
      : startOutboxSweeper({ ...ctx, log: opts.log, outboxes, redisUrl: opts.redisUrl, prefix: opts.prefix }, opts.sweeper);
  const delivery = opts.webhooks ? new WebhookDeliveryWorker(opts.db, connection, opts.prefix, deliveryQueue, opts.webhooks, opts.log) : undefined;
  return {
    async drain() {
      await Promise.all(workers.map((w) => w.drain()));
    },
    async close() {
      await sweeper?.stop();
      await Promise.all(workers.map((w) => w.close()));
      await delivery?.close();
      await deliveryQueue.close();
      await deliveryRedis.quit().catch(() => deliveryRedis.disconnect());
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}

/** How startWorkerThread is told what to do when its thread is gone. */
export type WorkerThreadOptions = {
  /**
   * Called once when the thread exits without being asked to (an uncaught error, an
   * out-of-memory kill of the thread). The caller ends the process: see startWorkerThread.
   */
  onExit(code: number): void;
  /** The module the thread runs; tests start one that crashes. */
  boot?: URL;
};

/**
 * Starts the workers in a thread of this process (workers/thread.ts), so the HTTP thread serves
 * only requests; resolves once the thread consumes. A dead thread is never restarted here (chDB
 * hangs once such a thread is gone, docs/ingestion.md): `onExit` ends the process instead.
 */
export function startWorkerThread(config: Config, log: Logger, opts: WorkerThreadOptions): Promise<Workers> {
  const boot = opts.boot ?? new URL('./thread-boot.mjs', import.meta.url);
  let thread: Worker | undefined; // the running thread; undefined once it is gone
  let closing = false;
  let waiting: { reply: 'drained' | 'closed'; done(): void }[] = [];
  // Answered by the thread; a thread that is gone answers nothing, and its jobs wait in Redis.
  const request = (type: 'drain' | 'close', reply: 'drained' | 'closed') =>
    new Promise<void>((done) => {
      if (!thread) return done();
      waiting.push({ reply, done });
      thread.postMessage({ type } satisfies ThreadMessage);
    });
  const answer = (reply: string) => {
    const answered = waiting.filter((w) => w.reply === reply);
    waiting = waiting.filter((w) => w.reply !== reply);
    for (const w of answered) w.done();
  };

  const started = new Promise<void>((resolve, reject) => {
    const worker = new Worker(boot, { workerData: { config }, name: 'svc-workers' });
    let ready = false;
    worker.on('message', (message: ThreadMessage) => {
      if (message.type === 'ready') {
        ready = true;
        thread = worker;
        resolve();
      } else if (message.type === 'metrics') setWorkerThreadMetrics(message.metrics);
      else answer(message.type);
    });
    worker.on('error', (err) => {
      if (!ready) reject(err);
      else log.error({ err }, 'workers thread failed');
    });
    worker.on('exit', (code) => {
      if (!ready) return reject(new Error(`workers thread exited (${code}) before it consumed`));
      thread = undefined;
      answer('drained');
      answer('closed');
      if (closing) return;
      log.fatal({ code }, 'workers thread exited; ending the process for its supervisor to start again');
      opts.onExit(code);
    });
  });

  return started.then(() => ({
    drain: () => request('drain', 'drained'),
    async close() {
      closing = true;
      const running = thread;
      await request('close', 'closed');
      await running?.terminate();
    },
  }));
}
