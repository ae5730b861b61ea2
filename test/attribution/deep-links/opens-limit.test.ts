import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { type AttributionBrand, attributionBrand, uniqueId } from '../public/setup';

/** POST /opens is limited per client IP as POST /clicks is (RATE_LIMIT_PUBLIC_IP). */

let t: TestService;
let acme: AttributionBrand;
beforeAll(async () => {
  t = await startTestService({ workers: false, env: { RATE_LIMIT_PUBLIC_IP: '3' } });
  acme = await attributionBrand(t, 'Acme');
});
afterAll(async () => destroyTestService(t));

const open = (remoteAddress: string) =>
  t.request({
    method: 'POST',
    url: '/api/public/attribution/opens',
    remoteAddress,
    payload: { pixel_key: acme.brand.pixel_key, platform: 'ios', install_id: uniqueId('inst'), url: `https://${acme.hostname}/app` },
  });

describe('POST /opens rate limit', () => {
  it('answers 429 rate_limited with Retry-After past RATE_LIMIT_PUBLIC_IP a minute from one address, with the limit headers on every answer', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await open('203.0.113.50');
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('3');
      expect(res.headers['ratelimit-remaining']).toBe(String(2 - i));
    }
    const over = await open('203.0.113.50');
    expect(over.statusCode).toBe(429);
    expect(over.json()).toEqual({ error: 'rate_limited' });
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    // Another address has its own count.
    expect((await open('203.0.113.51')).statusCode).toBe(200);
  });
});
