import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * Holds lease ARGV[3]: refreshed when held, taken when fewer than ARGV[1] unexpired leases are
 * held. A sorted set of lease ids scored by expiry on Redis's clock (the same for every process).
 */
const HOLD = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[3]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** A lease on one of an endpoint's turns: renewed before each attempt, given back at the end. */
export type Lease = { renew(): Promise<void>; giveBack(): Promise<void> };

/**
 * An endpoint's turns across every worker process, at most `limit` held at once: leases in Redis
 * that expire after `ttlMs` unless renewed, so a process that died gives its turns back by itself.
 */
export class EndpointLeases {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly opts: { limit: number; ttlMs: number },
  ) {}

  /** Waits for one of the endpoint's turns (polling, 10 ms doubling to 500 ms, jittered). */
  async hold(endpointId: string): Promise<Lease> {
    const key = `${this.prefix}:webhooks-in-flight:${endpointId}`;
    const id = randomUUID();
    let heldAt = 0;
    const take = async () => {
      for (let wait = 10; (await this.redis.eval(HOLD, 1, key, this.opts.limit, this.opts.ttlMs, id)) !== 1; wait = Math.min(2 * wait, 500)) {
        await sleep(wait * (0.5 + Math.random()));
      }
      heldAt = Date.now();
    };
    await take();
    return {
      // Renewed once a third of its time has passed: a lane of quick attempts costs Redis little.
      renew: async () => {
        if (Date.now() - heldAt > this.opts.ttlMs / 3) await take();
      },
      // A lease not given back (Redis away) expires by itself.
      giveBack: () => this.redis.zrem(key, id).then(() => undefined, () => undefined),
    };
  }
}
