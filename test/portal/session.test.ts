import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createBrand } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

let t: TestService;
let brandId: string;
const email = 'owner@acme.test';
const password = 'a long enough password';

beforeAll(async () => {
  t = await startTestService({ workers: false });
  brandId = (await createBrand(t, { name: 'Acme' })).id;
  const res = await t.request({ method: 'POST', url: `/api/internal/brands/${brandId}/portal-users`, admin: true, payload: { email, password } });
  expect(res.statusCode).toBe(201);
});
afterAll(async () => destroyTestService(t));

async function login(pw = password, headers: Record<string, string> = {}) {
  return t.request({ method: 'POST', url: '/api/client/auth/login', payload: { email: 'Owner@Acme.test', password: pw }, headers });
}
const cookieOf = (res: { headers: Record<string, unknown> }) => String(res.headers['set-cookie']).split(';')[0]!;
const tokenHash = (cookie: string) => createHash('sha256').update(cookie.split('=')[1]!).digest('hex');
const me = (cookie: string) => t.request({ method: 'GET', url: '/api/client/auth/me', headers: { cookie } });

describe('portal session (CONTRACT 6)', () => {
  it('logs in with email and password and sets an HttpOnly, SameSite=Lax session cookie', async () => {
    const res = await login();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ user: { email }, brand: { id: brandId, name: 'Acme' } });
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toMatch(/^svc_session=[A-Za-z0-9_-]{40,};/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    expect(setCookie).not.toContain('Secure'); // plain HTTP here; set over HTTPS
    const token = cookieOf(res).split('=')[1]!;
    const stored = await t.services.db.selectFrom('portal_sessions').select('token_hash').execute();
    expect(stored.map((s) => s.token_hash)).toContain(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(stored)).not.toContain(token);
    const me = await t.request({ method: 'GET', url: '/api/client/auth/me', headers: { cookie: cookieOf(res) } });
    expect(me.json()).toMatchObject({ brand: { id: brandId } });
  });

  it('refuses a wrong password or unknown email with 401', async () => {
    expect((await login('not the password')).statusCode).toBe(401);
    const res = await t.request({ method: 'POST', url: '/api/client/auth/login', payload: { email: 'nobody@x.test', password } });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'invalid_credentials' });
  });

  it('answers 401 unauthorized without a valid session', async () => {
    for (const cookie of [undefined, 'svc_session=forged']) {
      const res = await t.request({ method: 'GET', url: '/api/client/auth/me', headers: cookie ? { cookie } : {} });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'unauthorized' });
    }
  });

  it('logs out only the session that asks, on the server', async () => {
    const a = cookieOf(await login());
    const b = cookieOf(await login());
    const out = await t.request({ method: 'POST', url: '/api/client/auth/logout', headers: { cookie: a } });
    expect(out.statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: '/api/client/auth/me', headers: { cookie: a } })).statusCode).toBe(401);
    expect((await t.request({ method: 'GET', url: '/api/client/auth/me', headers: { cookie: b } })).statusCode).toBe(200);
  });

  it('rejects an expired session', async () => {
    const c = cookieOf(await login());
    expect((await me(c)).statusCode).toBe(200);
    await t.services.db.updateTable('portal_sessions').set({ expires_at: new Date(Date.now() - 1000) }).where('token_hash', '=', tokenHash(c)).execute();
    await t.services.recordChanges.caughtUp();
    expect((await me(c)).statusCode).toBe(401);
  });

  it('reads a session from Postgres once, then from memory', async () => {
    const c = cookieOf(await login());
    const reads = vi.spyOn(t.services.db, 'selectFrom');
    try {
      for (let i = 0; i < 5; i++) expect((await me(c)).statusCode).toBe(200);
      expect(reads.mock.calls.filter(([table]) => table === 'portal_sessions')).toHaveLength(1);
    } finally {
      reads.mockRestore();
    }
  });

  it('refuses a session revoked elsewhere (another process, an operator) once the notice arrives', async () => {
    const c = cookieOf(await login());
    expect((await me(c)).statusCode).toBe(200);
    await t.services.db.updateTable('portal_sessions').set({ revoked_at: new Date() }).where('token_hash', '=', tokenHash(c)).execute();
    await t.services.recordChanges.caughtUp();
    expect((await me(c)).statusCode).toBe(401);
  });

  it("ends a deleted user's sessions", async () => {
    const other = await t.request({ method: 'POST', url: `/api/internal/brands/${brandId}/portal-users`, admin: true, payload: { email: 'leaver@acme.test', password } });
    expect(other.statusCode).toBe(201);
    const res = await t.request({ method: 'POST', url: '/api/client/auth/login', payload: { email: 'leaver@acme.test', password } });
    const c = cookieOf(res);
    const links = () => t.request({ method: 'GET', url: '/api/client/attribution/links', headers: { cookie: c } });
    expect((await links()).statusCode).toBe(200);
    await t.services.db.deleteFrom('portal_users').where('email', '=', 'leaver@acme.test').execute();
    await t.services.recordChanges.caughtUp();
    expect((await links()).statusCode).toBe(401);
  });

  it('reads every session from Postgres while the change feed is down, and again once it is back', async () => {
    const c = cookieOf(await login());
    expect((await me(c)).statusCode).toBe(200);
    await t.services.recordChanges.close();
    try {
      // Without the feed no notice can arrive: a revocation must still hold at once.
      const d = cookieOf(await login());
      expect((await me(d)).statusCode).toBe(200);
      await t.services.db.updateTable('portal_sessions').set({ revoked_at: new Date() }).where('token_hash', 'in', [tokenHash(c), tokenHash(d)]).execute();
      expect((await me(c)).statusCode).toBe(401);
      expect((await me(d)).statusCode).toBe(401);
    } finally {
      await t.services.recordChanges.start();
    }
    const e = cookieOf(await login());
    expect((await me(e)).statusCode).toBe(200);
  });

  it('refuses cookie-authenticated writes from a foreign Origin', async () => {
    const c = cookieOf(await login());
    const foreign = await t.request({ method: 'POST', url: '/api/client/auth/logout', headers: { cookie: c, origin: 'https://evil.example' } });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json()).toEqual({ error: 'forbidden_origin' });
    expect((await t.request({ method: 'GET', url: '/api/client/auth/me', headers: { cookie: c } })).statusCode).toBe(200);
    expect((await login(password, { origin: 'https://evil.example' })).statusCode).toBe(403);
    const own = await t.request({ method: 'POST', url: '/api/client/auth/logout', headers: { cookie: c, origin: 'http://svc.test' } });
    expect(own.statusCode).toBe(200);
  });
});
