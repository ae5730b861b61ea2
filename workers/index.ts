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
  let thread: Worker | undefined; // the running thread; undefined between a crash and its restart
  let restart: NodeJS.Timeout | undefined;
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

  const start = () =>
    new Promise<void>((resolve, reject) => {
      const started = new Worker(new URL('./thread-boot.mjs', import.meta.url), { workerData: { config }, name: 'svc-workers' });
      let ready = false;
      started.on('message', (message: ThreadMessage) => {
        if (message.type === 'ready') {
          ready = true;
          resolve();
          if (closing) return void started.terminate(); // a restart that finished after close()
          thread = started;
        } else if (message.type === 'metrics') setWorkerThreadMetrics(message.metrics);
        else answer(message.type);
      });
      started.on('error', (err) => {
        if (!ready) reject(err);
        else log.error({ err }, 'workers thread failed');
      });
      started.on('exit', (code) => {
        if (!ready) return reject(new Error(`workers thread exited (${code}) before it consumed`));
        thread = undefined;
        answer('drained');
        answer('closed');
        if (closing) return;
        log.error({ code }, 'workers thread exited; starting it again in 1 s');
        restartSoon();
      });
    });

  // Until a new thread consumes again (it may fail to start while Redis or Postgres is down).
  const restartSoon = () => {
    restart = setTimeout(() => {
      start().catch((err) => {
        log.error({ err }, 'workers thread did not start; trying again in 1 s');
        if (!closing) restartSoon();
      });
    }, 1000);
  };

  return start().then(() => ({
    drain: () => request('drain', 'drained'),
    async close() {
      closing = true;
      clearTimeout(restart);
      const running = thread;
      await request('close', 'closed');
      await running?.terminate();
    },
  }));
}
