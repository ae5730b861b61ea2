import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../config';
import { HttpError } from './errors';

/** What a limit counts (CONTRACT 10): Data API requests per API key, public requests per client IP and per pixel key. */
export type RateLimitKind = 'data_api' | 'public_ip' | 'pixel_key';

export type RateLimitAnswer = { allowed: boolean; limit: number; remaining: number; resetSeconds: number };

const LIMIT_OF: Record<RateLimitKind, keyof Config['rateLimits']> = { data_api: 'dataApi', public_ip: 'publicIp', pixel_key: 'pixelKey' };

/** How long a request waits for Redis's count before it goes on unlimited (Redis slow or hung). */
const COUNT_WAIT_MS = 1000;

type Pending = { n: number; waiters: ((total: number | null) => void)[] };

/**
 * Fixed one-minute windows counted in Redis, shared by every process (CONTRACT 10), with counts
 * group-committed into one pipeline. `consume` answers null when the limit is off or Redis is away
 * or slow: limits then do not apply, and no request waits for them.
 */
export class RateLimiter {
  private pending = new Map<string, Pending>();
  private sending = false;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly limits: Config['rateLimits'],
    private readonly windowMs = 60_000,
  ) {}

  async consume(kind: RateLimitKind, id: string): Promise<RateLimitAnswer | null> {
    const limit = this.limits[LIMIT_OF[kind]];
    if (!limit || this.redis.status !== 'ready') return null;
    const now = Date.now();
    const window = Math.floor(now / this.windowMs);
    // Ids are hashed: API keys are secrets, and a made-up id of any length costs one short key.
    const key = `${this.prefix}:rate:${kind}:${window}:${createHash('sha256').update(id).digest('base64url').slice(0, 22)}`;
    const total = await this.count(key);
    if (total === null) return null;
    return {
      allowed: total <= limit,
      limit,
      remaining: Math.max(0, limit - total),
      resetSeconds: Math.max(1, Math.ceil(((window + 1) * this.windowMs - now) / 1000)),
    };
  }

  /** This request's place in the key's window; null when Redis did not answer in time. */
  private count(key: string): Promise<number | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), COUNT_WAIT_MS);
      let p = this.pending.get(key);
      if (!p) {
        p = { n: 0, waiters: [] };
        this.pending.set(key, p);
      }
      p.n++;
      p.waiters.push((total) => {
        clearTimeout(timer);
        resolve(total);
      });
      if (!this.sending) setImmediate(() => this.send());
    });
  }

  private async send(): Promise<void> {
    if (this.sending || this.pending.size === 0) return;
    this.sending = true;
    const batch = [...this.pending];
    this.pending = new Map();
    const pipeline = this.redis.pipeline();
    for (const [key, p] of batch) pipeline.incrby(key, p.n).pexpire(key, this.windowMs * 2);
    const results = await pipeline.exec().catch(() => null);
    batch.forEach(([, p], i) => {
      const [err, after] = results?.[i * 2] ?? [new Error('no answer')];
      // The waiters took the last n places below the new total, in the order they came.
      p.waiters.forEach((w, j) => {
        w(err ? null : Number(after) - p.n + j + 1);
      });
    });
    this.sending = false;
    if (this.pending.size > 0) void this.send();
  }
}

// The limits a request has passed so far: a later check (once the body is read) shows the tightest of all.
const passed = new WeakMap<FastifyReply, RateLimitAnswer[]>();

/**
 * Applies limits to a JSON route: consumes each, sets `RateLimit-Limit`, `RateLimit-Remaining`
 * and `RateLimit-Reset` of the tightest (with those this request passed before), and refuses with
 * 429 `{"error":"rate_limited"}` and `Retry-After` when one is spent. No headers when no limit
 * applies (off, or Redis away).
 */
export async function enforceRateLimits(reply: FastifyReply, limiter: RateLimiter, checks: [RateLimitKind, string][]): Promise<void> {
  const fresh = (await Promise.all(checks.map(([kind, id]) => limiter.consume(kind, id)))).filter((a) => a !== null);
  const answers = [...(passed.get(reply) ?? []), ...fresh];
  if (answers.length === 0) return;
  passed.set(reply, answers);
  const refused = answers.filter((a) => !a.allowed);
  const shown = (refused.length ? refused : answers).reduce((a, b) => (b.remaining < a.remaining || (b.remaining === a.remaining && b.resetSeconds > a.resetSeconds) ? b : a));
  reply.header('ratelimit-limit', shown.limit).header('ratelimit-remaining', shown.remaining).header('ratelimit-reset', shown.resetSeconds);
  if (refused.length === 0) return;
  reply.header('retry-after', Math.max(...refused.map((a) => a.resetSeconds)));
  throw new HttpError(429, { error: 'rate_limited' });
}
