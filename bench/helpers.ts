import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { signAdminToken } from '../src/http/admin-auth';

/** Latency percentiles of repeated async calls, in milliseconds. */
export async function timeCalls(fn: () => Promise<unknown>, opts: { warmup?: number; runs?: number } = {}) {
  const warmup = opts.warmup ?? 3;
  const samples: number[] = [];
  let first = 0;
  for (let i = 0; i < warmup + (opts.runs ?? 30); i++) {
    const t0 = performance.now();
    await fn();
    const ms = performance.now() - t0;
    if (i === 0) first = ms; // a cold call: what the first reader of a question waits
    if (i >= warmup) samples.push(ms);
  }
  return { p50_ms: percentile(samples, 50), p95_ms: percentile(samples, 95), p99_ms: percentile(samples, 99), first_ms: round(first) };
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return round(sorted[idx] ?? 0);
}

/** A phone's user agent for the benches' clicks. */
export const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148';

export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * A brand with a vanity domain and a web link `maya`, made through the internal endpoints with
 * `post` (which sends the admin token and throws on a refusal). Answers the brand and the domain.
 */
export async function seedWebLink(post: (path: string, body: object) => Promise<Record<string, unknown>>) {
  const brand = await post('/api/internal/brands', { name: 'Bench' });
  const creator = await post('/api/internal/creators', { name: 'Maya Lopez', first_name: 'Maya' });
  const hostname = `bench-${randomBytes(3).toString('hex')}.link`;
  const domain = await post('/api/internal/attribution-domains', { hostname, brand_id: brand.id });
  await post('/api/internal/attribution-links', {
    brand_id: brand.id,
    creator_id: creator.id,
    domain_id: domain.id,
    slug: 'maya',
    type: 'web',
    destination_url: 'https://shop.example/spring',
  });
  return { brand, hostname };
}

/** POSTs to the app with an admin JWT and answers the parsed body; a refusal throws. */
export function adminPost(app: FastifyInstance, adminJwtSecret: string) {
  const authorization = `Bearer ${signAdminToken(adminJwtSecret)}`;
  return async (url: string, payload: object) => {
    const res = await app.inject({ method: 'POST', url, payload, headers: { authorization } });
    if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
}
