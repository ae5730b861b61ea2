import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../src/config';
import { createLogger } from '../src/logger';
import { registry } from '../src/metrics';
import { openStores } from '../src/services';
import { startWorkers } from './index';
import { webhookWorkerOptions } from './webhook-delivery';
import type { ThreadMessage } from './thread-protocol';

/**
 * The queue consumers in their own thread (startWorkerThread), so job handling and inserts never
 * hold up the HTTP thread. Embedded ClickHouse allows one data directory per process, so this
 * thread opens its own connection to the API thread's directory.
 */
const { config } = workerData as { config: Config };
const port = parentPort!;
const post = (message: ThreadMessage) => port.postMessage(message);

const log = createLogger(config.logLevel).child({ thread: 'workers' });
const { db, warehouse } = await openStores(config, log, 'workers');
const workers = startWorkers({ redisUrl: config.redisUrl, prefix: config.queuePrefix, warehouse, db, log, webhooks: webhookWorkerOptions(config) });

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
