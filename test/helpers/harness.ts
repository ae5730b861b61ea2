import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { startWorkers, type WorkerOptions, type Workers } from '../../workers';
import { webhookWorkerOptions } from '../../workers/webhook-delivery';
import { buildApp } from '../../src/app';
import { type Config, loadConfig } from '../../src/config';
import { dropDatabase, ensureDatabase } from '../../src/db/database';
import { signAdminToken } from '../../src/http/admin-auth';
import { createLogger } from '../../src/logger';
import { deleteKeysByPrefix } from '../../src/queues/redis';
import { closeServices, createServices, migrate, type Services } from '../../src/services';
import { testDatabaseUrl } from './test-postgres';
import { testRedisUrl } from './test-redis';

/**
 * One isolated service per test file: its own Postgres database, Redis key prefix and
 * ClickHouse database, against the real Postgres and Redis of the machine and embedded
 * ClickHouse. Vitest runs each file in its own process, which gets its own chDB directory.
 */
export type TestService = {
  app: FastifyInstance;
  services: Services;
  config: Config;
  workers: Workers | undefined;
  adminToken: string;
  /** Injects a request; `admin: true` adds the admin JWT. */
  request(opts: InjectOptions & { admin?: boolean }): Promise<LightMyRequestResponse>;
  /** Starts the queue consumers (when started without them); `options` replace the service's (e.g. `sweeper: false`). */
  startWorkers(options?: Partial<WorkerOptions>): void;
  /** Stops the consumers, leaving jobs in Redis. */
  stopWorkers(): Promise<void>;
  /** Waits until every queued fact is in ClickHouse. */
  settle(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
};

const processDataDir = mkdtempSync(join(tmpdir(), 'svc-test-'));
process.once('exit', () => rmSync(processDataDir, { recursive: true, force: true }));

export type TestServiceOptions = { workers?: boolean; env?: Record<string, string>; reuse?: Config };

/**
 * The environment variables that keep a test's service apart from every other: its own
 * Postgres database, ClickHouse database, Redis key prefix and secrets, named after `name`.
 */
export function isolatedEnv(name: string) {
  const suffix = randomBytes(5).toString('hex');
  return {
    DATABASE_URL: testDatabaseUrl(`svc_${name}_${suffix}`),
    CLICKHOUSE_DATABASE: `svc_${name}_${suffix}`,
    QUEUE_PREFIX: `svc${name}_${suffix}`,
    ADMIN_JWT_SECRET: `${name}-admin-secret-${suffix}`,
    SECRET_KEY: `${name}-secret-key-${suffix}`,
  };
}

/** A Postgres database of the calling test file's own: created before its tests, dropped after them. */
export function ownDatabase(name: string): string {
  const { DATABASE_URL } = isolatedEnv(name);
  beforeAll(() => ensureDatabase(DATABASE_URL));
  afterAll(() => dropDatabase(DATABASE_URL));
  return DATABASE_URL;
}

export async function startTestService(opts: TestServiceOptions = {}): Promise<TestService> {
  const config =
    opts.reuse ??
    loadConfig({
      ...isolatedEnv('test'),
      NODE_ENV: 'test',
      REDIS_URL: testRedisUrl,
      DATA_DIR: processDataDir,
      PUBLIC_BASE_URL: 'http://svc.test',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      // Tests send many requests from one address; the limit tests set their own (test/http/rate-limit.test.ts).
      RATE_LIMIT_DATA_API: '0',
      RATE_LIMIT_PUBLIC_IP: '0',
      // Portal passwords hashed at a test cost (a suite logs in hundreds of times); '' gives the real one.
      TEST_SCRYPT_N: '1024',
      ...opts.env,
    });
  const log = createLogger(config.logLevel);
  const services = await createServices(config, log);
  await migrate(services);
  const app = await buildApp(services);
  await app.ready();
  const adminToken = signAdminToken(config.adminJwtSecret);

  const t: TestService = {
    app,
    services,
    config,
    workers: undefined,
    adminToken,
    request({ admin, ...req }) {
      const headers = { ...(req.headers ?? {}) } as Record<string, string>;
      if (admin) headers.authorization = `Bearer ${adminToken}`;
      return app.inject({ ...req, headers });
    },
    startWorkers(options = {}) {
      t.workers ??= startWorkers({
        redisUrl: config.redisUrl,
        prefix: config.queuePrefix,
        warehouse: services.warehouse,
        db: services.db,
        log,
        webhooks: webhookWorkerOptions(config),
        ...options,
      });
    },
    async stopWorkers() {
      await t.workers?.close();
      t.workers = undefined;
    },
    async settle(timeoutMs = 20_000) {
      await services.queues.drain();
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const counts = await services.queues.counts();
        const open = Object.values(counts).reduce(
          (n, c) => n + (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0),
          0,
        );
        // The written batches' notices reach the answer cache through Postgres, a moment later.
        if (open === 0) return void (await Promise.all([services.factChanges.caughtUp(), services.recordChanges.caughtUp(), services.linkChanges.caughtUp()]));
        if (Date.now() > deadline) throw new Error(`queues did not settle: ${JSON.stringify(counts)}`);
        await sleep(25);
      }
    },
    async stop() {
      await app.close();
      await t.stopWorkers();
      await closeServices(services);
    },
  };
  if (opts.workers !== false) t.startWorkers();
  return t;
}

/** Removes what a test service left behind: its Postgres database, Redis keys and ClickHouse database. */
export async function destroyTestService(t: TestService): Promise<void> {
  await t.stop();
  await dropDatabase(t.config.databaseUrl);
  const redis = new Redis(t.config.redisUrl);
  await deleteKeysByPrefix(redis, t.config.queuePrefix);
  await redis.quit();
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a value that passes `ok`, or fails after `timeoutMs`. */
export async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms; last value: ${JSON.stringify(v)}`);
    await sleep(50);
  }
}
