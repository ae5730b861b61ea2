import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EndpointLeases } from '../../../src/attribution/outbound-webhooks/endpoint-leases';
import { deleteKeysByPrefix } from '../../../src/queues/redis';

/** An endpoint's turns across processes: at most `limit` leases, given back or expiring. */

let redis: Redis;
const prefix = `test-leases-${randomBytes(4).toString('hex')}`;

beforeAll(() => {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
});
afterAll(async () => {
  await deleteKeysByPrefix(redis, prefix);
  await redis.quit();
});

/** Whether `p` settles within `ms`. */
const within = (p: Promise<unknown>, ms: number) => Promise.race([p.then(() => true), new Promise((r) => setTimeout(() => r(false), ms))]);

describe('endpoint leases', () => {
  it('lets `limit` holders in at once; a lease given back lets the next in', async () => {
    // Two sets of leases over one Redis: two processes.
    const a = new EndpointLeases(redis, prefix, { limit: 2, ttlMs: 60_000 });
    const b = new EndpointLeases(redis, prefix, { limit: 2, ttlMs: 60_000 });
    const first = await a.hold('e1');
    await b.hold('e1');
    const third = b.hold('e1');
    expect(await within(third, 300)).toBe(false);
    // Another endpoint's turns are its own.
    expect(await within(a.hold('e2'), 300)).toBe(true);
    await first.giveBack();
    expect(await within(third, 1000)).toBe(true);
  });

  it('gives back by itself the turns of a holder that died, and a renewed lease outlives its first term', async () => {
    const leases = new EndpointLeases(redis, prefix, { limit: 1, ttlMs: 600 });
    const kept = await leases.hold('e3');
    // Renewed past a third of its term, it is still held after the first term ends.
    await new Promise((r) => setTimeout(r, 300));
    await kept.renew();
    await new Promise((r) => setTimeout(r, 400));
    const next = leases.hold('e3');
    expect(await within(next, 150)).toBe(false);
    // Never given back nor renewed again (its process died): the next holder gets in once it expires.
    expect(await within(next, 1500)).toBe(true);
  });
});
