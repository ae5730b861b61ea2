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
