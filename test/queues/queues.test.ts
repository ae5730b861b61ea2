import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BUSY_ROWS, FactQueues, lingerMs } from '../../src/queues/queues';
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

  it('lingers 1 ms for clicks while they come alone, 5 ms once a job held 8 rows; outbox kinds always 100 ms', () => {
    expect(lingerMs('clicks', 0)).toBe(1);
    expect(lingerMs('clicks', BUSY_ROWS - 1)).toBe(1);
    expect(lingerMs('clicks', BUSY_ROWS)).toBe(5);
    expect(lingerMs('installs', 0)).toBe(100);
    expect(lingerMs('installs', 500)).toBe(100);
    expect(lingerMs('placements', 500)).toBe(0);
  });

  it('a quiet queue sends a click 2 ms after another as a job of its own', async () => {
    queues = new FactQueues(redis, `${prefix}:a`);
    const first = queues.add('clicks', [{ n: 1 }] as never[]);
    await sleep(2);
    await Promise.all([first, queues.add('clicks', [{ n: 2 }] as never[])]);
    expect(await clickJobSizes(queues)).toEqual([1, 1]);
  });

  it('after a busy job, a click 2 ms after another joins its job', async () => {
    queues = new FactQueues(redis, `${prefix}:b`);
    await Promise.all(Array.from({ length: BUSY_ROWS }, (_, n) => queues!.add('clicks', [{ n }] as never[])));
    const first = queues.add('clicks', [{ n: 1 }] as never[]);
    await sleep(2); // timers fire in order of their due time, so this one always comes before the 10 ms linger
    await Promise.all([first, queues.add('clicks', [{ n: 2 }] as never[])]);
    expect(await clickJobSizes(queues)).toEqual([BUSY_ROWS, 2]);
  });
});
