import { Redis } from 'ioredis';

/**
 * A Redis connection: BullMQ workers wait through reconnects, the CLI and the sweeper queue
 * offline; the request path (`request`) never holds a request (docs/operations.md#a-store-down-or-hung): no offline queue and
 * a `commandTimeoutMs` on every command, after which a silent connection is replaced.
 */
export function createRedis(url: string, kind: 'worker' | 'client' | 'request' = 'client', commandTimeoutMs = 2000): Redis {
  if (kind !== 'request') return new Redis(url, { maxRetriesPerRequest: kind === 'worker' ? null : 3, enableReadyCheck: true, lazyConnect: false });
  return new Redis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    commandTimeout: commandTimeoutMs,
    socketTimeout: commandTimeoutMs,
    connectTimeout: commandTimeoutMs,
    enableReadyCheck: true,
    lazyConnect: false,
  });
}

/** Resolves once `redis` is ready, or after `ms` (a Redis still away then is retried in the background). */
export async function readyWithin(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once('ready', done);
  });
}

/** Deletes every key under `prefix:` (test and benchmark clean-up; SCAN, never KEYS). */
export async function deleteKeysByPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
