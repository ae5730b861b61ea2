import type { FastifyInstance } from 'fastify';
import { startWorkerThread, type Workers } from '../workers';
import { buildApp } from './app';
import { type Config, ConfigError, loadConfig } from './config';
import { type DemoBrand, describeDemo, loadDemoOnFirstStart } from './demo';
import { bufferedLogStream, createLogger } from './logger';
import { checkRedisDatabase, closeServices, createServices, migrate, type Services, warnOnUnsafeRedis } from './services';
import { RELEASE_WAIT_MS, waitForRelease } from './wait-for-release';

type Mode = 'all' | 'api' | 'workers';

/**
 * `npm start` (all), `npm run api`, `npm run workers`. Embedded ClickHouse lives in one
 * process, so the split modes need a ClickHouse server (CLICKHOUSE_URL).
 */
async function main(mode: Mode): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, bufferedLogStream());
  if (mode !== 'all' && !config.clickhouseUrl) {
    throw new ConfigError(
      `Invalid configuration: CLICKHOUSE_URL is required for "npm run ${mode}" (embedded ClickHouse runs in one process: use npm start)`,
    );
  }
  await checkRedisDatabase(config.redisUrl);
  const services = await createServices(config, log);
  await migrate(services);
  await warnOnUnsafeRedis(services.redis, log);
  if (config.webhooks.allowedNetworks.length > 0) {
    log.warn({ networks: config.webhooks.allowedNetworks }, 'WEBHOOK_ALLOWED_NETWORKS is set: webhook URLs may reach these private addresses (development and tests only)');
  }

  const running: Running = {};
  const stop = shutdown(log, services, running);
  // A second signal (Ctrl-C twice) ends the process at once, its log written (pino flushes at exit).
  let signalled = false;
  const onSignal = (signal: string) => {
    if (signalled) process.exit(1);
    signalled = true;
    void stop(signal, 0);
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  stopWhenOrphaned(log, () => stop('parent process gone', 0));
  if (mode !== 'api') {
    // A workers thread that dies ends the process (see startWorkerThread); its supervisor starts it again.
    running.workers = await startWorkerThread(config, log, { onExit: () => stop('workers thread exited', 1) });
  }
  if (mode !== 'workers') {
    running.app = await buildApp(services);
    const address = await listen(running.app, config, log);
    await flushed(log);
    console.log(`svc listening on ${address}`);
    const demo = await loadDemoOnFirstStart(services, running.app);
    // Last, after the demo's seeding (and its log lines): what a newcomer opens next.
    await flushed(log);
    console.log(`\n${startBanner(config, demo, address)}\n`);
  }
}

type Running = { app?: FastifyInstance; workers?: Workers };

/** Resolves once the log lines written so far are out (the log is buffered: bufferedLogStream). */
const flushed = (log: Services['log']) => new Promise<void>((resolve) => log.flush(() => resolve()));

/** Where the service answers (PUBLIC_BASE_URL): its portal and API reference, then the demo brand loaded, if any. */
function startBanner(config: Config, demo: DemoBrand[], address: string): string {
  // PORT=0 (any free port) with PUBLIC_BASE_URL unset: the address listened on says which.
  const base = config.publicBaseUrl.endsWith(':0') ? address : config.publicBaseUrl;
  const port = Number(new URL(address).port);
  // The demo's lines name the portal (with its login) and the API docs themselves.
  if (demo.length) return `svc is running at ${base}\n\n${describeDemo(demo, base, port)}`;
  return [`svc is running at ${base}`, `  Portal:       ${base}/portal/`, `  API docs:     ${base}/docs/api`].join('\n');
}

/** Listens on the configured address, waiting for a port a predecessor still holds (waitForRelease). */
function listen(app: FastifyInstance, config: Config, log: Services['log']): Promise<string> {
  return waitForRelease(() => app.listen({ port: config.port, host: config.host }), {
    held: (err) => (err as NodeJS.ErrnoException).code === 'EADDRINUSE',
    onHeld: () => log.warn({ port: config.port }, `port in use (a previous instance still stopping?); waiting up to ${RELEASE_WAIT_MS / 1000} s`),
  });
}

/**
 * Stops the service when the process that started it is gone: an orphan would keep the port and
 * the embedded ClickHouse directory from the service started in its place. Under init or a container
 * runtime (parent 1) there is nothing to watch.
 */
function stopWhenOrphaned(log: Services['log'], stop: () => void): void {
  const parent = process.ppid;
  if (parent <= 1) return;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    log.warn({ parent }, 'the parent process is gone; shutting down');
    stop();
  }, 1000);
  timer.unref();
}

/** Stops in order, once, and exits with `code` (forced after 25 s). */
function shutdown(log: Services['log'], services: Services, running: Running) {
  let stopping = false;
  return async (reason: string, code: number) => {
    if (stopping) return;
    stopping = true;
    log.info({ reason }, 'shutting down');
    const force = setTimeout(() => {
      log.error('shutdown took over 25 s; exiting');
      process.exit(1);
    }, 25_000);
    try {
      await running.app?.close(); // stop taking requests, finish those in flight
      await services.queues.drain(); // accepted rows reach Redis
      await running.workers?.close(); // batches in hand reach ClickHouse
      await closeServices(services);
      clearTimeout(force);
      process.exit(code);
    } catch (err) {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
}

const mode = (process.argv[2] ?? 'all') as Mode;
main(mode).catch((err) => {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error(err);
  process.exit(1);
});
