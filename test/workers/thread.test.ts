import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { dropDatabase } from '../../src/db/database';
import { FactQueues } from '../../src/queues/queues';
import { createRedis, deleteKeysByPrefix } from '../../src/queues/redis';
import { createWarehouse } from '../../src/warehouse/clickhouse';
import { eventually, isolatedEnv } from '../helpers/harness';
import { testRedisUrl } from '../helpers/test-redis';

/**
 * The workers' thread dies of an uncaught error while it holds a batch of clicks. The
 * process ends with the thread's exit code instead of starting a thread again (with
 * embedded ClickHouse the process's other connections would hang), and once started
 * again it writes every click exactly once. The process runs crash-entry.ts, the workers
 * part of `npm start` with a thread that crashes the first time it is asked to drain.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'svc-thread-'));
const env = {
  ...process.env,
  ...isolatedEnv('thread'),
  NODE_ENV: 'test',
  REDIS_URL: testRedisUrl,
  DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
};
const redis = createRedis(env.REDIS_URL, 'worker');
const queues = new FactQueues(redis, env.QUEUE_PREFIX);
const clickQueue = new Queue('clicks', { connection: redis, prefix: env.QUEUE_PREFIX });

afterAll(async () => {
  await clickQueue.close();
  await queues.close();
  await deleteKeysByPrefix(redis, env.QUEUE_PREFIX);
  await redis.quit();
  await dropDatabase(env.DATABASE_URL);
  rmSync(dataDir, { recursive: true, force: true });
});

type Started = { child: ChildProcess; output: () => string; exited: Promise<{ code: number | null; signal: string | null }> };

function start(): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/workers/crash-entry.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<{ code: number | null; signal: string | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not consuming in 60 s: ${out}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('consuming')) {
        clearTimeout(timer);
        resolve({ child, output: () => out, exited });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then(({ code }) => reject(new Error(`exited ${code} before consuming: ${out}`)));
  });
}

/** A click row as POST /clicks queues it. */
const clickRow = (i: number) => ({
  brand_id: 'thread-brand',
  link_id: 1,
  creator_id: 'creator',
  click_token: `svc_${env.QUEUE_PREFIX}_${i}`,
  clicked_at: '2026-11-22 10:00:00.000',
  domain: 'thread.link',
  slug: 'maya',
  link_type: 'web',
  platform: 'ios',
  country: 'US',
  referrer: '',
  utm_source: '',
  utm_medium: '',
  utm_campaign: '',
  utm_term: '',
  utm_content: '',
  ip_hash: '',
});

const openJobs = async () => {
  const c = await clickQueue.getJobCounts('waiting', 'active', 'delayed', 'completed');
  return { open: (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0), completed: c.completed ?? 0 };
};

describe('workers thread', () => {
  it('that dies mid-batch ends the process, and after a restart every click is written once', { timeout: 120_000 }, async () => {
    const first = await start();
    for (let i = 0; i < 20; i++) await queues.add('clicks', [clickRow(i)]);
    // The thread has taken jobs: they wait for its batch timer. Asked to drain, it dies.
    await eventually(() => clickQueue.getJobCounts('active'), (c) => (c.active ?? 0) > 0);
    first.child.kill('SIGUSR2');
    const ended = await first.exited;
    // Ended on its own, not by a signal from us; an insert in flight may make the engine abort instead of exit(1).
    expect(ended.code === 1 || ended.signal === 'SIGABRT', first.output()).toBe(true);
    expect(existsSync(join(dataDir, `crashed-${env.QUEUE_PREFIX}`))).toBe(true);
    expect((await openJobs()).completed).toBe(0);

    // Clicks answered while the process was down wait in Redis.
    for (let i = 20; i < 30; i++) await queues.add('clicks', [clickRow(i)]);
    const second = await start();
    // The dead thread's jobs come back once their locks expire (about 15 s).
    await eventually(openJobs, (j) => j.open === 0, 60_000);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);

    // The process is gone: this one may open its ClickHouse directory and count.
    const warehouse = await createWarehouse({ database: env.CLICKHOUSE_DATABASE, dataDir });
    try {
      const [counts] = await warehouse.rows<{ rows: number; tokens: number }>(
        'SELECT count() AS rows, uniqExact(click_token) AS tokens FROM clicks WHERE brand_id = {b:String}',
        { b: 'thread-brand' },
      );
      expect(counts).toEqual({ rows: 30, tokens: 30 });
    } finally {
      await warehouse.close();
    }
  });
});
