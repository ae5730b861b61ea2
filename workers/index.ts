import type { Logger } from 'pino';
import { createRedis } from '../src/queues/redis';
import type { Db } from '../src/db/database';
import type { Warehouse } from '../src/warehouse/clickhouse';
import { BatchWorker } from './batch-worker';
import { FACT_WRITERS } from './writers';

export type Workers = { drain(): Promise<void>; close(): Promise<void> };

/** Starts one batch worker per fact kind on a dedicated Redis connection. */
export function startWorkers(opts: { redisUrl: string; prefix: string; warehouse: Warehouse; db: Db; log: Logger }): Workers {
  const connection = createRedis(opts.redisUrl, 'worker');
  const ctx = { warehouse: opts.warehouse, db: opts.db };
  const workers = FACT_WRITERS.map((w) => new BatchWorker(w, ctx, connection, opts.prefix, opts.log));
  return {
    async drain() {
      await Promise.all(workers.map((w) => w.drain()));
    },
    async close() {
      await Promise.all(workers.map((w) => w.close()));
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
