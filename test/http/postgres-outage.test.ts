import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeUnavailable } from '../../src/http/errors';
import { LOGIN_LIMITS } from '../../src/portal/login-limit';
import { type AttributionBrand, attributionBrand, postPublic, uniqueId } from '../attribution/public/setup';
import { createApiKey } from '../helpers/fixtures';
import { destroyTestService, eventually, startTestService, type TestService } from '../helpers/harness';
import { createPortalUser, PORTAL_PASSWORD, portalLogin } from '../portal/helpers';

/**
 * With Postgres refusing the service's database, every route that needs it
 * answers 503 {"error":"unavailable"} (never 500) within 5 s, /healthz 503 within 5 s, and the
 * service recovers by itself once the database takes connections again. Only this test's own
 * database is refused; the shared server is left as it is.
 */
let t: TestService;
let acme: AttributionBrand;
let apiKey: string;
let cookie: string;
const email = `owner-${uniqueId()}@acme.example`;
let admin: pg.Client;
let database: string;

beforeAll(async () => {
  t = await startTestService({ env: { PG_STATEMENT_TIMEOUT_MS: '1500' } });
  acme = await attributionBrand(t);
  apiKey = (await createApiKey(t, acme.brand.id)).key;
  await createPortalUser(t, acme.brand.id, email);
  cookie = await portalLogin(t, email);
  const url = new URL(t.config.databaseUrl);
  database = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
});

afterAll(async () => {
  await admin.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`);
  await admin.end();
  await destroyTestService(t);
});

/** Every kind of route that reads or writes Postgres, each answer timed. */
function requests() {
  const pixelKey = acme.brand.pixel_key;
  return {
    click: () => postPublic(t, 'clicks', { domain: acme.hostname, slug: 'maya' }),
    install: () => postPublic(t, 'installs', { pixel_key: pixelKey, install_id: uniqueId(), platform: 'ios' }),
    event: () => postPublic(t, 'events', { pixel_key: pixelKey, transaction_id: uniqueId(), amount: 5, currency: 'USD' }),
    login: () => t.request({ method: 'POST', url: '/api/client/auth/login', payload: { email, password: PORTAL_PASSWORD } }),
    portal: () => t.request({ method: 'GET', url: '/api/client/auth/me', headers: { cookie } }),
    dataApi: () => t.request({ method: 'GET', url: '/api/v1/creators', headers: { authorization: `Bearer ${apiKey}` } }),
    internal: () => t.request({ method: 'GET', url: '/api/internal/brands', admin: true }),
  };
}

describe('Postgres refusing the database', () => {
  it('answers 503 unavailable on every route that needs it, within 5 s, and /healthz 503', async () => {
    await admin.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS false`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
    for (const [name, send] of Object.entries(requests())) {
      const started = performance.now();
      const res = await send();
      const ms = performance.now() - started;
      expect([name, res.statusCode, res.json()]).toEqual([name, 503, { error: 'unavailable' }]);
      expect(ms, name).toBeLessThan(5000);
    }
    // Logins that checked no password cost no attempt: after the outage the owner still logs in (below).
    for (let i = 0; i < LOGIN_LIMITS.perAccount; i++) expect((await requests().login()).statusCode).toBe(503);
    const started = performance.now();
    const health = await t.request({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(503);
    expect(health.json()).toMatchObject({ ok: false, postgres: false, redis: true });
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('recovers by itself once the database takes connections again', async () => {
    await admin.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`);
    await eventually(() => t.request({ method: 'GET', url: '/healthz' }).then((r) => r.statusCode), (s) => s === 200, 15_000);
    const r = requests();
    expect((await r.click()).statusCode).toBe(200);
    expect((await r.install()).statusCode).toBe(201);
    expect((await r.event()).statusCode).toBe(200);
    expect((await r.login()).statusCode).toBe(200);
    expect((await r.portal()).statusCode).toBe(200);
    expect((await r.dataApi()).statusCode).toBe(200);
    expect((await r.internal()).statusCode).toBe(200);
  });
});

describe('timeouts', () => {
  it('cancels a request-path statement after PG_STATEMENT_TIMEOUT_MS, as a store that cannot serve (503)', async () => {
    const started = performance.now();
    const err = await sql`SELECT pg_sleep(10)`.execute(t.services.db).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: '57014' });
    expect(storeUnavailable(err)).toBe(true);
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('gives every request REQUEST_TIMEOUT_MS to arrive, and bounds idle connections', () => {
    expect(t.app.server.requestTimeout).toBe(10_000);
    expect(t.app.server.timeout).toBe(120_000);
    expect(t.app.server.keepAliveTimeout).toBe(65_000);
  });
});
