import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createBrand } from '../helpers/fixtures';
import { FreezableProxy } from '../helpers/freezable-proxy';
import { testDatabaseUrl, testPostgres } from '../helpers/test-postgres';
import { destroyTestService, eventually, startTestService, type TestService } from '../helpers/harness';
import { createPortalUser, PORTAL_PASSWORD } from '../portal/helpers';

/**
 * A Postgres that is up but hung (here: reached through a proxy that stops passing
 * bytes) never holds a request. Statements give up after PG_STATEMENT_TIMEOUT_MS (4 s), new
 * connections after PG_CONNECT_TIMEOUT_MS (2 s): every route that needs Postgres answers 503
 * unavailable within 5 s, /healthz 503 within 2 s, and all recovers once Postgres answers.
 */
let proxy: FreezableProxy;
let t: TestService;
let brand: Awaited<ReturnType<typeof createBrand>>;
let apiKey: string;
const email = `owner-${randomBytes(4).toString('hex')}@acme.example`;

beforeAll(async () => {
  proxy = await FreezableProxy.start(testPostgres);
  t = await startTestService({ env: { DATABASE_URL: testDatabaseUrl(`svc_pghung_${randomBytes(5).toString('hex')}`, proxy.port) } });
  brand = await createBrand(t, { name: 'Acme' });
  apiKey = (await createApiKey(t, brand.id)).key;
  await createPortalUser(t, brand.id, email);
});

afterAll(async () => {
  proxy.thaw();
  await destroyTestService(t);
  await proxy.close();
});

const install = () =>
  t.request({
    method: 'POST',
    url: '/api/public/attribution/installs',
    payload: { pixel_key: brand.pixel_key, install_id: randomBytes(6).toString('hex'), platform: 'ios' },
  });

async function timed(name: string, request: Promise<LightMyRequestResponse>) {
  const started = performance.now();
  const res = await request;
  return { name, status: res.statusCode, body: res.json(), ms: performance.now() - started };
}

describe('Postgres hung', () => {
  it('answers 503 unavailable within 5 s on every route that needs Postgres, and /healthz 503 within 2 s', async () => {
    expect((await install()).statusCode).toBe(201);
    proxy.freeze();
    const answers = await Promise.all([
      timed('install', install()),
      timed('event', t.request({ method: 'POST', url: '/api/public/attribution/events', payload: { pixel_key: brand.pixel_key, transaction_id: 'o-1', amount: 5 } })),
      timed('login', t.request({ method: 'POST', url: '/api/client/auth/login', payload: { email, password: PORTAL_PASSWORD } })),
      timed('data api', t.request({ method: 'GET', url: '/api/v1/creators', headers: { authorization: `Bearer ${apiKey}` } })),
      timed('internal', t.request({ method: 'GET', url: '/api/internal/brands', admin: true })),
    ]);
    const health = await timed('healthz', t.request({ method: 'GET', url: '/healthz' }));
    for (const a of answers) {
      expect([a.name, a.status, a.body]).toEqual([a.name, 503, { error: 'unavailable' }]);
      expect(a.ms, a.name).toBeLessThan(5000);
    }
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ ok: false, postgres: false, redis: true });
    expect(health.ms).toBeLessThan(2000);
  });

  it('recovers by itself once Postgres answers again', async () => {
    proxy.thaw();
    await eventually(() => t.request({ method: 'GET', url: '/healthz' }).then((r) => r.statusCode), (s) => s === 200, 15_000);
    expect((await install()).statusCode).toBe(201);
    expect((await t.request({ method: 'POST', url: '/api/client/auth/login', payload: { email, password: PORTAL_PASSWORD } })).statusCode).toBe(200);
  });
});
