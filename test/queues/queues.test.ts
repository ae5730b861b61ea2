import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { FactQueues, lingerMs } from '../../src/queues/queues';
import { deleteKeysByPrefix } from '../../src/queues/redis';
import { isolatedEnv, sleep } from '../helpers/harness';
import { testRedisUrl } from '../helpers/test-redis';

const { QUEUE_PREFIX: prefix } = isolatedEnv('queues');
const redis = new Redis(testRedisUrl);
afterAll(async () => {
  await deleteKeysByPrefix(redis, prefix);
  await redis.quit();
});

/** The row counts of the clicks queue's jobs, oldest first. */
async function clickJobSizes(queues: FactQueues): Promise<number[]> {
  const jobs = await queues.queues.clicks.getJobs(['wait'], 0, -1, true);
  return jobs.map((job) => job.data.rows.length);
}

describe('FactQueues gathering', () => {
  let queues: FactQueues | undefined;
  afterEach(async () => {
    await queues?.queues.clicks.obliterate({ force: true });
    await queues?.close();
  });

  it('clicks and the placement kinds leave without a window; outbox kinds gather 100 ms', () => {
    expect(lingerMs('clicks')).toBe(0);
    expect(lingerMs('placements')).toBe(0);
    expect(lingerMs('installs')).toBe(100);
    expect(lingerMs('ledger')).toBe(100);
  });

  it('a lone click is sent to Redis in the next event-loop turn, before any timer could fire', async () => {
    queues = new FactQueues(redis, `${prefix}:lone`);
    const sent = vi.spyOn(queues.queues.clicks, 'add');
    const accepted = queues.add('clicks', [{ n: 1 }] as never[]);
    await new Promise((r) => setImmediate(r));
    expect(sent).toHaveBeenCalledTimes(1);
    await accepted;
    expect(await clickJobSizes(queues)).toEqual([1]);
  });

  it('clicks added while a send is in flight go together in the next job', async () => {
    queues = new FactQueues(redis, `${prefix}:inflight`);
    const first = queues.add('clicks', [{ n: 1 }] as never[]);
    // The first click's add has left (it went in the turn this resumes in) and Redis cannot have answered yet.
    await new Promise((r) => setImmediate(r));
    const meanwhile = [2, 3, 4].map((n) => queues!.add('clicks', [{ n }] as never[]));
    await Promise.all([first, ...meanwhile]);
    expect(await clickJobSizes(queues)).toEqual([1, 3]);
  });

  it('a quiet queue sends a click 2 ms after another as a job of its own', async () => {
    queues = new FactQueues(redis, `${prefix}:a`);
    const first = queues.add('clicks', [{ n: 1 }] as never[]);
    await sleep(2);
    await Promise.all([first, queues.add('clicks', [{ n: 2 }] as never[])]);
    expect(await clickJobSizes(queues)).toEqual([1, 1]);
  });
});
