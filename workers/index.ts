import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Config } from '../src/config';
import type { Db } from '../src/db/database';
import { setWorkerThreadMetrics } from '../src/metrics';
import { createRedis } from '../src/queues/redis';
import type { Warehouse } from '../src/warehouse/clickhouse';
import { BatchWorker } from './batch-worker';
import { type SweeperOptions, startOutboxSweeper } from './outbox-sweeper';
import type { ThreadMessage } from './thread-protocol';
import { FACT_WRITERS } from './writers';

export type Workers = { drain(): Promise<void>; close(): Promise<void> };

export type WorkerOptions = {
  redisUrl: string;
  prefix: string;
  warehouse: Warehouse;
  db: Db;
  log: Logger;
  /** Outbox sweeper timing (default: every 10 s, rows unconfirmed for 30 s); false: no sweeper. */
  sweeper?: (SweeperOptions & { intervalMs?: number }) | false;
};

/**
 * Starts one batch worker per fact kind on a dedicated Redis connection, and the outbox
 * sweeper, which queues again installs and ledger rows that ClickHouse has not confirmed.
 */
export function startWorkers(opts: WorkerOptions): Workers {
  const connection = createRedis(opts.redisUrl, 'worker');
  const ctx = { warehouse: opts.warehouse, db: opts.db };
  const workers = FACT_WRITERS.map((w) => new BatchWorker(w, ctx, connection, opts.prefix, opts.log));
  const sweeper =
    opts.sweeper === false
      ? undefined
      : startOutboxSweeper({ ...ctx, log: opts.log, redisUrl: opts.redisUrl, prefix: opts.prefix }, opts.sweeper);
  return {
    async drain() {
      await Promise.all(workers.map((w) => w.drain()));
    },
    async close() {
      await sweeper?.stop();
      await Promise.all(workers.map((w) => w.close()));
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}

/**
 * Starts the workers in a thread of this process (workers/thread.ts), as `npm start` and
 * `npm run workers` do: the HTTP thread keeps its event loop to requests and queue adds
 * while the consumers and their ClickHouse inserts run on the other core. Resolves once
 * the thread consumes. A thread that dies is logged and started again a second later;
 * its jobs' locks expire and the new thread takes them back (nothing is lost or doubled).
 */
export function startWorkerThread(config: Config, log: Logger): Promise<Workers> {
  let thread: Worker;
  let closing = false;
  const replies = new Map<string, () => void>();
  const request = (type: 'drain' | 'close', reply: 'drained' | 'closed') =>
    new Promise<void>((resolve) => {
      replies.set(reply, resolve);
      thread.postMessage({ type } satisfies ThreadMessage);
    });

  const start = () =>
    new Promise<void>((resolve, reject) => {
      thread = new Worker(new URL('./thread-boot.mjs', import.meta.url), { workerData: { config }, name: 'svc-workers' });
      let ready = false;
      thread.on('message', (message: ThreadMessage) => {
        if (message.type === 'ready') {
          ready = true;
          resolve();
        } else if (message.type === 'metrics') setWorkerThreadMetrics(message.metrics);
        else replies.get(message.type)?.();
      });
      thread.on('error', (err) => {
        if (!ready) reject(err);
        else log.error({ err }, 'workers thread failed');
      });
      thread.on('exit', (code) => {
        for (const done of replies.values()) done();
        if (!ready) reject(new Error(`workers thread exited (${code}) before it consumed`));
        if (closing || !ready) return;
        log.error({ code }, 'workers thread exited; starting it again in 1 s');
        restartSoon();
      });
    });

  // Until a new thread consumes again (it may fail to start while Redis or Postgres is down).
  const restartSoon = () =>
    setTimeout(() => {
      if (closing) return;
      start().catch((err) => {
        log.error({ err }, 'workers thread did not start; trying again in 1 s');
        restartSoon();
      });
    }, 1000);

  return start().then(() => ({
    drain: () => request('drain', 'drained'),
    async close() {
      closing = true;
      await request('close', 'closed');
      await thread.terminate();
    },
  }));
}
