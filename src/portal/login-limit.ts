import rateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { addressKey } from '../client-address';
import { refuse } from '../refusal';
import { keyedHash } from '../secrets';

/**
 * Failed logins allowed per window: per account from one client IP, so a stranger's guesses never
 * lock the owner out (docs/hardening.md#portal-login-lock-out), and per IP across accounts. Behind a reverse proxy, TRUST_PROXY
 * must name it, or every client shares the proxy's address and one limit.
 */
export const LOGIN_LIMITS = { perAccount: 10, perIp: 50, windowMs: 15 * 60_000 };

// Takes one attempt; the counter's window starts on the first.
const TAKE = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('PTTL', KEYS[1])}`;
// After a wrong password: the failure that spends the limit starts the lock's whole window.
// Only then: an attempt given back (a right password) must not push earlier failures' window out.
const FAILED = `if tonumber(redis.call('GET', KEYS[1]) or '0') >= tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end`;
const READ = `return {tonumber(redis.call('GET', KEYS[1]) or '0'), redis.call('PTTL', KEYS[1])}`;
// Gives one back, never below zero and without touching the window.
const GIVE_BACK = `if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then redis.call('DECR', KEYS[1]) end`;

export type LoginLimits = {
  /** Takes an attempt from the account at this IP and from the IP; answers 429 (with Retry-After) when either is spent. */
  take(req: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** Gives the attempts back after a successful login: only failures count. */
  giveBack(req: FastifyRequest): Promise<void>;
  /** After a wrong password: a counter it spent is locked for the whole window from now. */
  failed(req: FastifyRequest): Promise<void>;
};

/**
 * Login rate limiting with @fastify/rate-limit on Redis, under `keyPrefix`, keyed by keyed hashes
 * (SECRET_KEY) of the client IP and the email: neither reaches Redis, nor a plain hash of one. A
 * login takes its attempt before the password is checked (concurrent guesses cannot slip past)
 * and a successful one gives it back.
 */
export async function loginLimits(app: FastifyInstance, redis: Redis, keyPrefix: string, secretKey: string): Promise<LoginLimits> {
  const redisKey = (key: string) => `${keyPrefix}${key}`;
  // The plugin's store contract, with counters that can be given back.
  class LoginAttemptStore implements FastifyRateLimitStore {
    incr(key: string, done: (err: Error | null, res?: { current: number; ttl: number }) => void, timeWindow: number) {
      redis.eval(TAKE, 1, redisKey(key), timeWindow).then((r) => done(null, counter(r)), done);
    }
    read(key: string, done: (err: Error | null, res?: { current: number; ttl: number }) => void) {
      redis.eval(READ, 1, redisKey(key)).then((r) => done(null, counter(r)), done);
    }
    child() {
      return this;
    }
  }
  await app.register(rateLimit, { global: false, store: LoginAttemptStore });

  // The account key reads the login body, which the route has validated before taking an attempt.
  const hashed = (value: string) => keyedHash(secretKey, value, 'base64url').slice(0, 22);
  // An IPv6 client by its /64, as every per-IP count (src/client-address.ts).
  const ipKey = (req: FastifyRequest) => `ip:${hashed(addressKey(req.ip))}`;
  const accountKey = (req: FastifyRequest) => `account:${hashed((req.body as { email: string }).email.trim().toLowerCase())}:${ipKey(req)}`;
  const limiters = [
    { keyOf: accountKey, max: LOGIN_LIMITS.perAccount },
    { keyOf: ipKey, max: LOGIN_LIMITS.perIp },
  ].map((l) => ({ ...l, limit: app.createRateLimit({ max: l.max, timeWindow: LOGIN_LIMITS.windowMs, keyGenerator: l.keyOf }) }));
  const giveBackAll = (req: FastifyRequest) => Promise.all(limiters.map((l) => redis.eval(GIVE_BACK, 1, redisKey(l.keyOf(req)))));

  return {
    async take(req, reply) {
      const results = await Promise.all(limiters.map((l) => l.limit(req)));
      const spent = results.filter((r) => !r.isAllowed && r.isExceeded);
      if (spent.length === 0) return;
      // A refused login checked no password: it costs nothing.
      await giveBackAll(req);
      reply.header('retry-after', Math.max(...spent.map((r) => (r.isAllowed ? 0 : r.ttlInSeconds)), 1));
      throw refuse(429, 'rate_limited');
    },
    async giveBack(req) {
      await giveBackAll(req);
    },
    async failed(req) {
      await Promise.all(limiters.map((l) => redis.eval(FAILED, 1, redisKey(l.keyOf(req)), LOGIN_LIMITS.windowMs, l.max)));
    },
  };
}

function counter(reply: unknown): { current: number; ttl: number } {
  const [current, ttl] = reply as [number, number];
  return { current, ttl: Math.max(ttl, 0) };
}
