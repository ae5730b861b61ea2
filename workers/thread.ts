import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../src/config';
import { createDb } from '../src/db/database';
import { createLogger } from '../src/logger';
import { registry } from '../src/metrics';
import { createWarehouse } from '../src/warehouse/clickhouse';
import { startWorkers } from './index';
import type { ThreadMessage } from './thread-protocol';

/**
 * The queue consumers in their own thread (started by startWorkerThread): BullMQ job
 * handling and ClickHouse inserts then never hold up the HTTP thread's event loop.
 * Embedded ClickHouse allows one data directory per process, not per thread, so this
 * thread opens its own connection to the directory the API thread uses.
 */
const { config } = workerData as { config: Config };
const port = parentPort!;
const post = (message: ThreadMessage) => port.postMessage(message);

const log = createLogger(config.logLevel).child({ thread: 'workers' });
const db = createDb(config.databaseUrl);
const warehouse = await createWarehouse({ url: config.clickhouseUrl, database: config.clickhouseDatabase, dataDir: config.dataDir });
const workers = startWorkers({ redisUrl: config.redisUrl, prefix: config.queuePrefix, warehouse, db, log });

// The API thread serves /metrics: send it this thread's counters now and then.
const sendMetrics = async () =>
  post({ type: 'metrics', metrics: (await registry.getMetricsAsJSON()).filter((m) => m.name.startsWith('svc_')) });
const metricsTimer = setInterval(() => void sendMetrics(), 2000);

port.on('message', async (message: ThreadMessage) => {
  if (message.type === 'drain') {
    await workers.drain();
    post({ type: 'drained' });
  } else if (message.type === 'close') {
    clearInterval(metricsTimer);
    await workers.close();
    await sendMetrics();
    await warehouse.close();
    await db.destroy();
    post({ type: 'closed' });
    port.close();
  }
});
post({ type: 'ready' });
