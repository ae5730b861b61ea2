import type { Redis } from 'ioredis';
import { type Config, ConfigError } from './config';
import { ChangeFeed } from './db/change-feed';
import { createDb, type Db, ensureDatabase } from './db/database';
import { migratePostgres } from './db/migrate';
import { RateLimiter } from './http/rate-limit';
import type { Logger } from './logger';
import type { Queues } from './facts';
import { FactQueues } from './queues/queues';
import { createRedis, readyWithin } from './queues/redis';
import { RepeatedLog } from './repeated-log';
import { RELEASE_WAIT_MS } from './wait-for-release';
import { createWarehouse, type Warehouse } from './warehouse/clickhouse';
import { type FactChanges, factChanges as factChangesFeed, RECORD_CHANGES, type RecordChanges, recordChanges as recordChangesFeed } from './reads/changes';
import { Reads } from './reads/pipeline';
import { migrateWarehouse } from './warehouse/migrate';

/** The connections a process holds, created once and handed to routes and workers. */
export type Services = {
  config: Config;
  log: Logger;
  db: Db;
  redis: Redis;
  warehouse: Warehouse;
  queues: Queues;
  /** Changes to what clicks are served by (migrations/0006): the served-link cache follows it. */
  linkChanges: ChangeFeed;
  /** Facts landed and records changed, per brand: the versions of the read pipeline's answers. */
  factChanges: FactChanges;
  recordChanges: RecordChanges;
  /** The read pipeline of the Data API and the portal (src/reads/pipeline.ts). */
  reads: Reads;
  /** The request limits (docs/operations.md#rate-limits), counted in Redis (src/http/rate-limit.ts). */
  rateLimiter: RateLimiter;
};

/**
 * Postgres and ClickHouse as the API (`requests`: statement and connect timeouts,
 * docs/operations.md#a-store-down-or-hung) or the workers' thread (no timeouts: its statements are not the request path) open them.
 */
export async function openStores(config: Config, log: Logger, use: 'requests' | 'workers'): Promise<{ db: Db; warehouse: Warehouse }> {
  const { pgStatementMs, pgConnectMs, clickhouseQueryMs } = config.timeouts;
  // The API's connections hear the record changes they write (src/reads/changes.ts, followWrites).
  const db =
    use === 'requests'
      ? createDb(config.databaseUrl, 10, { statementMs: pgStatementMs, connectMs: pgConnectMs }, [RECORD_CHANGES])
      : createDb(config.databaseUrl, 10);
  const warehouse = await createWarehouse({
    url: config.clickhouseUrl,
    database: config.clickhouseDatabase,
    dataDir: config.dataDir,
    queryTimeoutMs: use === 'requests' ? clickhouseQueryMs : undefined,
    onDirectoryHeld: () =>
      log.warn(
        { dir: config.dataDir },
        `embedded ClickHouse is held by another process (a previous instance still stopping?); waiting up to ${RELEASE_WAIT_MS / 1000} s`,
      ),
  });
  return { db, warehouse };
}

export async function createServices(config: Config, log: Logger): Promise<Services> {
  await ensureDatabase(config.databaseUrl);
  const { db, warehouse } = await openStores(config, log, 'requests');
  const redis = createRedis(config.redisUrl, 'request', config.timeouts.redisCommandMs);
  // ioredis reports every failed reconnect: one line a second while Redis is away.
  const redisErrors = new RepeatedLog(log, 'warn', 'Redis unreachable', { countField: 'errors' });
  redis.on('error', (err) => redisErrors.report({ err: err.message }));
  await readyWithin(redis, 5000);
  const queues: Queues = new FactQueues(redis, config.queuePrefix);
  const linkChanges = new ChangeFeed(config.databaseUrl, 'link_changes', log);
  const recordChanges = recordChangesFeed(config.databaseUrl, log);
  const factChanges = factChangesFeed(config.databaseUrl, log);
  recordChanges.followWrites(db);
  await Promise.all([linkChanges.start(), recordChanges.start(), factChanges.start()]);
  const reads = new Reads({ facts: factChanges, records: recordChanges, maxBytes: config.readCacheBytes });
  const rateLimiter = new RateLimiter(redis, { prefix: config.queuePrefix, secretKey: config.secretKey, limits: config.rateLimits });
  return { config, log, db, redis, warehouse, queues, linkChanges, factChanges, recordChanges, reads, rateLimiter };
}

/** Applies pending Postgres and ClickHouse migrations. */
export async function migrate(services: Pick<Services, 'config' | 'warehouse' | 'log'>): Promise<void> {
  // Its own pool, without the request path's statement timeout: a migration may take its time.
  const db = createDb(services.config.databaseUrl, 1);
  const pg = await migratePostgres(db).finally(() => db.destroy());
  const ch = await migrateWarehouse(services.warehouse);
  if (pg.length || ch.length) services.log.info({ postgres: pg, clickhouse: ch }, 'migrations applied');
}

/** Closes in dependency order: queued rows reach Redis before Redis closes. */
export async function closeServices(s: Services): Promise<void> {
  await s.queues.close();
  await Promise.all([s.linkChanges.close(), s.recordChanges.close(), s.factChanges.close()]);
  await s.redis.quit().catch(() => s.redis.disconnect());
  await s.warehouse.close();
  await s.db.destroy();
}

/**
 * BullMQ needs Redis to keep what it holds: warn when it runs without an append-only
 * file or with an eviction policy that may drop queue keys.
 */
export async function warnOnUnsafeRedis(redis: Redis, log: Logger): Promise<void> {
  try {
    const [, aof] = (await redis.config('GET', 'appendonly')) as string[];
    const [, policy] = (await redis.config('GET', 'maxmemory-policy')) as string[];
    if (aof !== 'yes') log.warn('Redis runs without appendonly: queued clicks are lost if Redis restarts (set appendonly yes)');
    if (policy !== 'noeviction') log.warn(`Redis maxmemory-policy is ${policy}: BullMQ needs noeviction`);
  } catch {
    log.warn('could not read Redis configuration (CONFIG GET refused); check appendonly yes and noeviction');
  }
}

/**
 * REDIS_URL's database number must exist on the server: ioredis logs the refusal and goes on in
 * database 0, beside whatever else lives there. Asked on a connection of its own before any other
 * opens; a Redis not answering within 2 s proves nothing (the service starts and waits for it).
 */
export async function checkRedisDatabase(redisUrl: string): Promise<void> {
  const db = Number(new URL(redisUrl).pathname.slice(1) || 0);
  if (db === 0) return;
  const inDefault = new URL(redisUrl);
  inDefault.pathname = ''; // connect in database 0, then ask for this one
  const redis = createRedis(inDefault.toString(), 'request');
  redis.on('error', () => {});
  try {
    await readyWithin(redis, 2000);
    await redis.select(db);
  } catch (err) {
    if (/out of range/i.test((err as Error).message)) {
      throw new ConfigError(`Invalid configuration: REDIS_URL names database ${db}, which this Redis server does not have (its "databases" setting)`);
    }
  } finally {
    redis.disconnect();
  }
}
