import { Redis } from 'ioredis';

/**
 * A Redis connection. BullMQ workers need `maxRetriesPerRequest: null` (blocking
 * commands must wait through reconnects); other clients (the CLI, the outbox sweeper) wait
 * for a connection in the offline queue and fail after three reconnects. The request path
 * (`request`) must never hold a request (CONTRACT 10): no offline queue, so a command while
 * Redis is away fails at once; every command times out after `commandTimeoutMs`, and a
 * connection that sends nothing back for as long is dropped and opened again, so a hung Redis
 * fails every pending command instead of piling them up. Commands are not re-sent after a
 * reconnect: their callers were already told they failed.
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
