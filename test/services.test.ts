import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger';
import { warnOnUnsafeRedis } from '../src/services';
import { PrivateRedis } from './helpers/private-redis';

/** The start-up warning about Redis settings BullMQ needs, against a Redis server of this test's own, whose settings it may change. */
let server: PrivateRedis;
let redis: Redis;

beforeAll(async () => {
  server = await PrivateRedis.start();
  redis = new Redis(server.url);
});
afterAll(async () => {
  await redis.quit().catch(() => redis.disconnect());
  await server.kill();
});

async function warnings(): Promise<string[]> {
  const lines: string[] = [];
  await warnOnUnsafeRedis(redis, createLogger('warn', { write: (line: string) => lines.push(line) }));
  return lines.map((line) => JSON.parse(line).msg as string);
}

describe('Redis settings at start', () => {
  it('warns when Redis keeps no append-only file or may evict queue keys, and is quiet when it is set up', async () => {
    await redis.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const both = await warnings();
    expect(both).toHaveLength(2);
    expect(both[0]).toMatch(/without appendonly/);
    expect(both[1]).toMatch(/maxmemory-policy is allkeys-lru: BullMQ needs noeviction/);

    await redis.config('SET', 'appendonly', 'yes');
    await redis.config('SET', 'maxmemory-policy', 'noeviction');
    expect(await warnings()).toEqual([]);
  });
});
