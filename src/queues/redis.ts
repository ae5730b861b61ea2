import { Redis } from 'ioredis';

/**
 * A Redis connection. BullMQ workers need `maxRetriesPerRequest: null` (blocking
 * commands must wait through reconnects); producers keep failing fast instead.
 */
export function createRedis(url: string, kind: 'worker' | 'client' = 'client'): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: kind === 'worker' ? null : 3,
    enableReadyCheck: true,
    lazyConnect: false,
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
