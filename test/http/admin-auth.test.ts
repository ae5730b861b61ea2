import { createSigner } from 'fast-jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: false });
});
afterAll(async () => destroyTestService(t));

const sign = (key: string, claims: Record<string, unknown>, expiresIn = 60_000) =>
  createSigner({ key, algorithm: 'HS256', expiresIn })(claims);

describe('admin JWT', () => {
  const brand = { method: 'POST' as const, url: '/api/internal/brands', payload: { name: 'Acme' } };

  it('refuses a request without a token with 401', async () => {
    const res = await t.request(brand);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'unauthorized' });
  });

  it('checks the token before the body is read: a body that is not JSON, or too large, without a token is 401', async () => {
    const headers = { 'content-type': 'application/json' };
    for (const payload of ['{not json', `{"name":"${'x'.repeat(2_000_000)}"}`]) {
      const res = await t.request({ method: 'POST', url: '/api/internal/brands', headers, payload });
      expect([res.statusCode, res.json()]).toEqual([401, { error: 'unauthorized' }]);
    }
  });

  it('refuses a badly signed or expired token with 401', async () => {
    const forged = sign('another-secret-of-enough-length', { user_typ: 'svc' });
    expect((await t.request({ ...brand, headers: { authorization: `Bearer ${forged}` } })).statusCode).toBe(401);
    const expired = createSigner({ key: t.config.adminJwtSecret, algorithm: 'HS256' })({
      user_typ: 'svc',
      exp: Math.floor(Date.now() / 1000) - 10,
    });
    expect((await t.request({ ...brand, headers: { authorization: `Bearer ${expired}` } })).statusCode).toBe(401);
  });

  it('refuses a valid token whose user_typ is not svc with 403', async () => {
    const token = sign(t.config.adminJwtSecret, { user_typ: 'brand' });
    const res = await t.request({ ...brand, headers: { authorization: `Bearer ${token}` } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'forbidden' });
  });

  it('accepts the CLI token', async () => {
    expect((await t.request({ ...brand, admin: true })).statusCode).toBe(201);
  });

  it('keeps bull-board behind the same token', async () => {
    expect((await t.request({ method: 'GET', url: '/admin/queues' })).statusCode).toBe(401);
    const cookie = await boardCookie();
    expect((await t.request({ method: 'GET', url: '/admin/queues', headers: { cookie } })).statusCode).toBe(200);
    const api = await t.request({ method: 'GET', url: '/admin/queues/api/queues', headers: { cookie } });
    expect(api.statusCode).toBe(200);
    expect(api.json().queues.map((q: { name: string }) => q.name).sort()).toEqual(
      ['clicks', 'creators', 'installs', 'ledger', 'placement_metrics', 'placements', 'webhooks'],
    );
    // The cookie stands for the token on bull-board only, never on the internal API.
    const internal = await t.request({ ...brand, headers: { cookie } });
    expect(internal.statusCode).toBe(401);
    expect(internal.json()).toEqual({ error: 'unauthorized' });
  });
});

/** Opens the board with ?token= as an operator's browser does: answers the cookie it sets. */
async function boardCookie(): Promise<string> {
  const res = await t.request({ method: 'GET', url: `/admin/queues?token=${t.adminToken}` });
  expect(res.statusCode).toBe(303);
  expect(res.headers['set-cookie']).toMatch(/svc_admin=.*HttpOnly/);
  return String(res.headers['set-cookie']).split(';')[0]!;
}

describe('the queue board (docs/hardening.md)', () => {
  it('takes ?token= once: sets its cookie and redirects to the same address without the token', async () => {
    const res = await t.request({ method: 'GET', url: `/admin/queues/queue/clicks?status=failed&token=${t.adminToken}&page=2` });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/admin/queues/queue/clicks?status=failed&page=2');
    expect(res.headers['set-cookie']).toMatch(/^svc_admin=[^;]+; Path=\/admin\/queues; HttpOnly; SameSite=Strict/);
    expect(String(res.headers['set-cookie'])).not.toContain('Secure'); // PUBLIC_BASE_URL is http here
  });

  it('refuses a state-changing request from a foreign Origin, even with its cookie or a Bearer token', async () => {
    const cookie = await boardCookie();
    const pause = (headers: Record<string, string>) => t.request({ method: 'PUT', url: '/admin/queues/api/queues/clicks/pause', headers: { cookie, ...headers } });
    const refused: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { origin: 'https://evil.example', authorization: `Bearer ${t.adminToken}` },
      { referer: 'https://evil.example/page' },
      {},
    ];
    for (const headers of refused) {
      const res = await pause(headers);
      expect([res.statusCode, res.json()]).toEqual([403, { error: 'forbidden_origin' }]);
    }
    expect(await t.services.queues.queues.clicks.isPaused()).toBe(false);
    // From the board's own page the write goes through.
    expect((await pause({ origin: t.config.publicBaseUrl })).statusCode).toBe(200);
    expect(await t.services.queues.queues.clicks.isPaused()).toBe(true);
    expect((await t.request({ method: 'PUT', url: '/admin/queues/api/queues/clicks/resume', headers: { cookie, referer: `${t.config.publicBaseUrl}/admin/queues/` } })).statusCode).toBe(200);
    expect(await t.services.queues.queues.clicks.isPaused()).toBe(false);
  });

  it('without a valid token answers a browser a page that says how to get one, and API clients 401 JSON', async () => {
    const page = await t.request({ method: 'GET', url: '/admin/queues', headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(page.statusCode).toBe(401);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('npm run cli -- admin-token');
    const api = await t.request({ method: 'GET', url: '/admin/queues/api/queues', headers: { accept: 'application/json' } });
    expect([api.statusCode, api.json()]).toEqual([401, { error: 'unauthorized' }]);
    expect((await t.request({ method: 'GET', url: '/admin/queues' })).json()).toEqual({ error: 'unauthorized' });
  });
});

describe('admin JWT lifetime and the queue board cookie', () => {
  const brand = { method: 'POST' as const, url: '/api/internal/brands', payload: { name: 'Acme' } };
  const now = () => Math.floor(Date.now() / 1000);
  // Exactly these claims: fast-jwt keeps a given iat, and adds none with noTimestamp.
  const raw = (claims: Record<string, unknown>) =>
    createSigner({ key: t.config.adminJwtSecret, algorithm: 'HS256', noTimestamp: !('iat' in claims) })({ user_typ: 'svc', ...claims });
  const status = async (token: string) => (await t.request({ ...brand, headers: { authorization: `Bearer ${token}` } })).statusCode;

  it('refuses a token without exp, or whose exp is more than 24 hours after iat (or after now without iat)', async () => {
    expect(await status(raw({ iat: now() }))).toBe(401);
    expect(await status(raw({}))).toBe(401);
    expect(await status(raw({ iat: now(), exp: now() + 24 * 3600 + 60 }))).toBe(401);
    expect(await status(raw({ iat: now() - 3600, exp: now() + 23 * 3600 + 60 }))).toBe(401);
    expect(await status(raw({ exp: now() + 24 * 3600 + 60 }))).toBe(401);
    // Issued "in ten years": its exp is an hour after its iat, but ten years from now.
    const tenYears = 10 * 365 * 24 * 3600;
    expect(await status(raw({ iat: now() + tenYears, exp: now() + tenYears + 3600 }))).toBe(401);
    const res = await t.request({ ...brand, headers: { authorization: `Bearer ${raw({})}` } });
    expect(res.json()).toEqual({ error: 'unauthorized' });
  });

  it('accepts a token whose exp is at most 24 hours after iat, or after now without iat', async () => {
    expect(await status(raw({ iat: now(), exp: now() + 24 * 3600 }))).toBe(201);
    expect(await status(raw({ exp: now() + 24 * 3600 - 60 }))).toBe(201);
    // A signer whose clock runs a little ahead.
    expect(await status(raw({ iat: now() + 30, exp: now() + 3600 }))).toBe(201);
  });

  it('sets no queue board cookie from a token it has not verified', async () => {
    const forged = sign('another-secret-of-enough-length', { user_typ: 'svc' });
    const notOperator = sign(t.config.adminJwtSecret, { user_typ: 'brand' });
    for (const [token, code] of [
      [forged, 401],
      ['not-a-jwt', 401],
      [raw({}), 401],
      [notOperator, 403],
    ] as const) {
      const res = await t.request({ method: 'GET', url: `/admin/queues?token=${encodeURIComponent(token)}` });
      expect(res.statusCode).toBe(code);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });
});
