import type { FastifyInstance } from 'fastify';
import { startWorkerThread, type Workers } from '../workers';
import { buildApp } from './app';
import { ConfigError, loadConfig } from './config';
import { loadDemoOnFirstStart } from './demo';
import { createLogger } from './logger';
import { closeServices, createServices, migrate, type Services, warnOnUnsafeRedis } from './services';

type Mode = 'all' | 'api' | 'workers';

/**
 * `npm start` (all), `npm run api`, `npm run workers`. Embedded ClickHouse lives in one
 * process, so the split modes need a ClickHouse server (CLICKHOUSE_URL).
 */
async function main(mode: Mode): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  if (mode !== 'all' && !config.clickhouseUrl) {
    throw new ConfigError(
      `Invalid configuration: CLICKHOUSE_URL is required for "npm run ${mode}" (embedded ClickHouse runs in one process: use npm start)`,
    );
  }
  const services = await createServices(config, log);
  await migrate(services);
  await warnOnUnsafeRedis(services.redis, log);

  let workers: Workers | undefined;
  let app: FastifyInstance | undefined;
  if (mode !== 'api') {
    workers = await startWorkerThread(config, log);
  }
  if (mode !== 'workers') {
    app = await buildApp(services);
    const address = await app.listen({ port: config.port, host: config.host });
    console.log(`svc listening on ${address}`);
  }
  onShutdown(log, services, app, workers);
  if (app) await loadDemoOnFirstStart(services, app);
}

function onShutdown(log: Services['log'], services: Services, app?: FastifyInstance, workers?: Workers): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      log.error('shutdown took over 25 s; exiting');
      process.exit(1);
    }, 25_000);
    try {
      await app?.close(); // stop taking requests, finish those in flight
      await services.queues.drain(); // accepted rows reach Redis
      await workers?.close(); // batches in hand reach ClickHouse
      await closeServices(services);
      clearTimeout(force);
      process.exit(0);
    } catch (err) {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

const mode = (process.argv[2] ?? 'all') as Mode;
main(mode).catch((err) => {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error(err);
  process.exit(1);
});
