import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger';
import { warnOnUnsafeRedis } from '../src/services';
import { eventually } from './helpers/harness';

/**
 * The start-up warning about Redis settings BullMQ needs, against a Redis server of this
 * test's own (a unix socket in a temporary directory), whose settings it may change.
 */
const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
const socket = join(dir, 'redis.sock');
let server: ChildProcess;
let redis: Redis;

beforeAll(async () => {
  server = spawn('redis-server', ['--port', '0', '--unixsocket', socket, '--dir', dir, '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  redis = new Redis({ path: socket, lazyConnect: true, retryStrategy: () => 100 });
  redis.on('error', () => {}); // the socket appears once the server is up
  await eventually(() => redis.connect().then(() => true, () => false), (ok) => ok, 10_000);
});
afterAll(async () => {
  await redis.quit().catch(() => redis.disconnect());
  // A throw-away server: SIGKILL, because with the append-only file switched on at run time this
  // Redis (7.0) may leave a SIGTERM's shutdown pending; the directory goes once the process has.
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGKILL');
  await exited;
  rmSync(dir, { recursive: true, force: true });
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
