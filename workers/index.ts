import type { Logger } from 'pino';
import { createRedis } from '../src/queues/redis';
import type { Db } from '../src/db/database';
import type { Warehouse } from '../src/warehouse/clickhouse';
import { BatchWorker } from './batch-worker';
import { type SweeperOptions, startOutboxSweeper } from './outbox-sweeper';
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
