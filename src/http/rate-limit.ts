import type { FastifyReply } from 'fastify';
import type { Redis } from 'ioredis';
import { addressKey } from '../client-address';
import type { Config } from '../config';
import { keyedHash } from '../secrets';
import { refuse } from '../refusal';

/**
 * What a limit counts (docs/hardening.md): Data API requests per API key, public requests per client
 * IP and per pixel key, wrong API keys per client IP, portal requests per session.
 */
export type RateLimitKind = 'data_api' | 'public_ip' | 'pixel_key' | 'failed_key' | 'portal';

export type RateLimitAnswer = { allowed: boolean; limit: number; remaining: number; resetSeconds: number };

const LIMIT_OF: Record<RateLimitKind, keyof Config['rateLimits']> = {
  data_api: 'dataApi',
  public_ip: 'publicIp',
  pixel_key: 'pixelKey',
  failed_key: 'failedKeys',
  portal: 'portal',
};
/** Kinds whose id is a client IP: keyed by addressKey (an IPv6 client by its /64). */
const BY_ADDRESS = new Set<RateLimitKind>(['public_ip', 'failed_key']);

/** How long a request waits for Redis's count before it goes on unlimited (Redis slow or hung). */
const COUNT_WAIT_MS = 1000;
/** Counts far below their limit wait in the process this long before they are sent. */
const FLUSH_MS = 100;
/** Only limits this large count in process: a small one is exact on every request. */
const MIN_LOCAL_LIMIT = 100;
/** Ids per script call: one call holds Redis for well under a millisecond. */
const SEND_CHUNK = 1000;
/** KEYS[1] the window's hash; ARGV: its time to live (ms), then field and count pairs; answers the new totals. */
const ADD_COUNTS_LUA = `
local totals = {}
for i = 2, #ARGV, 2 do totals[#totals + 1] = redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return totals`;
type CountingRedis = Redis & { addRateCounts(hash: string, ttlMs: number, ...fieldsAndCounts: (string | number)[]): Promise<number[]> };

/** Counts of one id not yet in Redis: `n` of them, some with a request waiting for its place. */
type Pending = { hash: string; field: string; limit: number; n: number; waiters: { place: number; answer(total: number | null): void }[] };

/**
 * Fixed one-minute windows counted in Redis, shared by every process (docs/operations.md#rate-limits): one hash per
 * kind and window, a field per hashed id. Far below its limit a count is taken in process and sent
 * within FLUSH_MS (a process may batch its counts); nearer, the request waits for Redis's total.
 * `consume` answers null when the limit is off or Redis is away or slow: limits then do not apply.
 */
export class RateLimiter {
  private pending = new Map<string, Pending>();
  private sending = false;
  private flushTimer: NodeJS.Timeout | undefined;
  /**
   * Redis's last total per key of the current window, for keys at a quarter of their limit or more:
   * at most four per limit's worth of requests. A key below that counts from 0 in process, at most
   * a quarter short, and learns its total with its next flush.
   */
  private known = new Map<string, number>();
  /** Counts of the pipeline on its way to Redis: in neither `pending` nor `known` until it answers. */
  private sent = new Map<string, Pending>();
  private window = -1;
  private readonly prefix: string;
  private readonly secretKey: string;
  private readonly limits: Config['rateLimits'];
  private readonly windowMs: number;

  constructor(
    private readonly redis: Redis,
    opts: { prefix: string; secretKey: string; limits: Config['rateLimits']; windowMs?: number },
  ) {
    this.prefix = opts.prefix;
    this.secretKey = opts.secretKey;
    this.limits = opts.limits;
    this.windowMs = opts.windowMs ?? 60_000;
    redis.defineCommand('addRateCounts', { numberOfKeys: 1, lua: ADD_COUNTS_LUA });
  }

  async consume(kind: RateLimitKind, id: string): Promise<RateLimitAnswer | null> {
    const at = this.place(kind, id);
    if (!at) return null;
    const { key, hash, field, limit } = at;
    const seen = (this.known.get(key) ?? 0) + (this.sent.get(key)?.n ?? 0) + (this.pending.get(key)?.n ?? 0);
    const local = limit >= MIN_LOCAL_LIMIT && seen < limit / 2;
    const total = local ? this.countLater(seen, key, hash, field, limit) : await this.count(key, hash, field, limit);
    return total === null ? null : this.answer(limit, total, at.now, at.window);
  }

  /**
   * The id's count so far in this window, as an answer with nothing consumed: `allowed` while the
   * count is below the limit (the next one still fits). Null as `consume`'s.
   */
  async peek(kind: RateLimitKind, id: string): Promise<RateLimitAnswer | null> {
    const at = this.place(kind, id);
    if (!at) return null;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), COUNT_WAIT_MS);
    });
    const read = this.redis.hget(at.hash, at.field).catch(() => null);
    const stored = await Promise.race([read, late]).finally(() => clearTimeout(timer));
    if (stored === null && this.redis.status !== 'ready') return null;
    const total = Number(stored ?? 0) + (this.sent.get(at.key)?.n ?? 0) + (this.pending.get(at.key)?.n ?? 0);
    const answer = this.answer(at.limit, total, at.now, at.window);
    return { ...answer, allowed: total < at.limit };
  }

  /** Where an id is counted in the current window; null when its limit is off or Redis is away. */
  private place(kind: RateLimitKind, id: string) {
    const limit = this.limits[LIMIT_OF[kind]];
    if (!limit || this.redis.status !== 'ready') return null;
    const now = Date.now();
    const window = Math.floor(now / this.windowMs);
    if (window !== this.window) {
      this.window = window;
      this.known.clear();
    }
    const hash = `${this.prefix}:rate:${kind}:${window}`;
    // Ids are keyed hashes (SECRET_KEY): API keys are secrets, and IPs are kept only as keyed
    // hashes (an IPv4 address's plain SHA-256 is found by trying all 2^32); any id is one short field.
    const field = keyedHash(this.secretKey, BY_ADDRESS.has(kind) ? addressKey(id) : id, 'base64url').slice(0, 22);
    return { key: `${hash} ${field}`, hash, field, limit, now, window };
  }

  private answer(limit: number, total: number, now: number, window: number): RateLimitAnswer {
    return {
      allowed: total <= limit,
      limit,
      remaining: Math.max(0, limit - total),
      resetSeconds: Math.max(1, Math.ceil(((window + 1) * this.windowMs - now) / 1000)),
    };
  }

  private take(key: string, hash: string, field: string, limit: number): Pending {
    let p = this.pending.get(key);
    if (!p) {
      p = { hash, field, limit, n: 0, waiters: [] };
      this.pending.set(key, p);
    }
    p.n++;
    return p;
  }

  /** Counted now, sent with the next flush: this request's place as far as this process knows (`seen` before it). */
  private countLater(seen: number, key: string, hash: string, field: string, limit: number): number {
    this.take(key, hash, field, limit);
    this.flushSoon();
    return seen + 1;
  }

  /** This request's place in the key's window as Redis counts it; null when Redis did not answer in time. */
  private count(key: string, hash: string, field: string, limit: number): Promise<number | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), COUNT_WAIT_MS);
      const p = this.take(key, hash, field, limit);
      p.waiters.push({
        place: p.n,
        answer(total) {
          clearTimeout(timer);
          resolve(total);
        },
      });
      if (!this.sending) setImmediate(() => void this.send());
    });
  }

  private async send(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.sending || this.pending.size === 0) return;
    this.sending = true;
    this.sent = this.pending;
    this.pending = new Map();
    const batch = [...this.sent.entries()];
    const totals = await this.sendCounts(batch.map(([, p]) => p));
    this.sent = new Map();
    batch.forEach(([key, p], i) => {
      const after = totals[i] ?? null;
      if (after !== null && after >= p.limit / 4) this.known.set(key, after);
      // The batch's n counts took the last n places below the new total, in the order they came.
      for (const w of p.waiters) w.answer(after === null ? null : after - p.n + w.place);
    });
    this.sending = false;
    if ([...this.pending.values()].some((p) => p.waiters.length > 0)) void this.send();
    else if (this.pending.size > 0) this.flushSoon();
  }

  /**
   * Adds the counts to Redis, one script call per window hash and SEND_CHUNK ids (a command per id
   * cost the process more than the rest of a request); answers each id's new total, null on failure.
   */
  private async sendCounts(counts: Pending[]): Promise<(number | null)[]> {
    const totals: (number | null)[] = new Array(counts.length).fill(null);
    const byHash = new Map<string, number[]>();
    counts.forEach((p, i) => {
      const indexes = byHash.get(p.hash) ?? [];
      if (indexes.length === 0) byHash.set(p.hash, indexes);
      indexes.push(i);
    });
    const calls: Promise<void>[] = [];
    for (const [hash, indexes] of byHash) {
      for (let start = 0; start < indexes.length; start += SEND_CHUNK) {
        const chunk = indexes.slice(start, start + SEND_CHUNK);
        const args = chunk.flatMap((i) => [counts[i]!.field, counts[i]!.n]);
        const call = (this.redis as CountingRedis)
          .addRateCounts(hash, this.windowMs * 2, ...args)
          .then((after) => {
            for (const [j, i] of chunk.entries()) totals[i] = Number(after[j]);
          })
          .catch(() => {});
        calls.push(call);
      }
    }
    await Promise.all(calls);
    return totals;
  }

  private flushSoon(): void {
    this.flushTimer ??= setTimeout(() => void this.send(), FLUSH_MS).unref();
  }
}

// The limits a request has passed so far: a later check (once the body is read) shows the tightest of all.
const passed = new WeakMap<FastifyReply, RateLimitAnswer[]>();

/**
 * Applies a limit to a JSON route: consumes it, sets `RateLimit-Limit`, `RateLimit-Remaining` and
 * `RateLimit-Reset` of the tightest of it and those this request passed before, and refuses with
 * 429 `{"error":"rate_limited"}` and `Retry-After` when one is spent. No headers when no limit
 * applies (off, or Redis away).
 */
export async function enforceRateLimit(reply: FastifyReply, limiter: RateLimiter, kind: RateLimitKind, id: string): Promise<void> {
  showRateLimit(reply, await limiter.consume(kind, id));
}

/**
 * Refuses, as enforceRateLimit does, when the id's count has reached its limit, consuming nothing:
 * for counts of failures, taken (`limiter.consume`) only once a request has failed.
 */
export async function refuseWhenSpent(reply: FastifyReply, limiter: RateLimiter, kind: RateLimitKind, id: string): Promise<void> {
  const count = await limiter.peek(kind, id);
  // Below the limit a failure count adds no headers: the route's own limit shows.
  if (count === null || count.allowed) return;
  showRateLimit(reply, count);
}

function showRateLimit(reply: FastifyReply, fresh: RateLimitAnswer | null): void {
  const before = passed.get(reply);
  if (fresh === null && !before) return;
  const answers = fresh === null ? before! : before ? [...before, fresh] : [fresh];
  passed.set(reply, answers);
  const refused = answers.filter((a) => !a.allowed);
  const shown = (refused.length ? refused : answers).reduce((a, b) => (b.remaining < a.remaining || (b.remaining === a.remaining && b.resetSeconds > a.resetSeconds) ? b : a));
  reply.header('ratelimit-limit', shown.limit).header('ratelimit-remaining', shown.remaining).header('ratelimit-reset', shown.resetSeconds);
  if (refused.length === 0) return;
  reply.header('retry-after', Math.max(...refused.map((a) => a.resetSeconds)));
  throw refuse(429, 'rate_limited');
}
