import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { type Config, loadConfig } from '../src/config';
import { dropDatabase } from '../src/db/database';
import { bufferedLogStream, createLogger, type Logger } from '../src/logger';
import { deleteKeysByPrefix } from '../src/queues/redis';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app';
import { closeServices, createServices, migrate, type Services } from '../src/services';
import { startWorkerThread, type Workers } from '../workers';

/** The benches log at `info` by default, as a default deployment does; BENCH_LOG_LEVEL=warn compares. */
export const benchLogLevel = process.env.BENCH_LOG_LEVEL || 'info';

/** A bench's logger is buffered as `npm start`'s is, but writes to stderr, so stdout keeps one JSON line per figure. */
export const benchLogger = (level: string): Logger => createLogger(level, bufferedLogStream(2));

/** The consumers in their own thread, as `npm start` runs them; a thread that dies ends the run with no figures. */
const benchWorkers = (config: Config, log: Logger): Promise<Workers> =>
  startWorkerThread(config, log, {
    onExit: (code) => {
      console.error(`the workers thread exited with ${code}: no figures from this run`);
      process.exit(1);
    },
  });

export type InProcessService = { services: Services; app: FastifyInstance; base: string; close(): Promise<void> };

/** The whole service in this process as `npm start` runs it: migrated stores, the workers' thread and the API on 127.0.0.1. */
export async function startInProcess(config: Config, log: Logger): Promise<InProcessService> {
  const services = await createServices(config, log);
  let workers: Workers | undefined;
  let app: FastifyInstance | undefined;
  const close = async () => {
    await app?.close();
    await workers?.close();
    await closeServices(services);
  };
  try {
    await migrate(services);
    workers = await benchWorkers(config, log);
    app = await buildApp(services);
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    return { services, app, base, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * A throw-away Postgres database, Redis key prefix and embedded-ClickHouse directory on
 * this machine's servers (DATABASE_URL and REDIS_URL as configured), removed afterwards.
 */
export function benchEnvironment(name: string): { config: Config; remove(): Promise<void> } {
  const suffix = randomBytes(5).toString('hex');
  const dataDir = mkdtempSync(join(tmpdir(), `svc-bench-${name}-`));
  // Secrets not given are generated into the throw-away directory.
  const base = loadConfig({ ...process.env, DATA_DIR: dataDir });
  const databaseUrl = new URL(base.databaseUrl);
  databaseUrl.pathname = `/svc_bench_${name}_${suffix}`;
  const config: Config = {
    ...base,
    env: 'test',
    databaseUrl: databaseUrl.toString(),
    clickhouseUrl: undefined,
    clickhouseDatabase: `svc_bench_${name}_${suffix}`,
    dataDir,
    queuePrefix: `svcbench_${suffix}`,
    publicBaseUrl: 'http://svc.bench',
    logLevel: benchLogLevel,
    demo: false,
  };
  return {
    config,
    async remove() {
      await dropDatabase(config.databaseUrl);
      const redis = new Redis(config.redisUrl);
      await deleteKeysByPrefix(redis, config.queuePrefix);
      await redis.quit();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
