import { createHash, randomBytes, scryptSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PortalSessions } from '../../src/portal/session';
import { verifyPassword } from '../../src/secrets';
import { createBrand } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

let t: TestService;
let brandId: string;
const email = 'owner@acme.test';
const password = 'a long enough password';

beforeAll(async () => {
  // Served as https (behind a TLS proxy), reached here over plain HTTP; a small per-session limit;
  // passwords hashed at the real cost.
  t = await startTestService({ workers: false, env: { PUBLIC_BASE_URL: 'https://svc.test', RATE_LIMIT_PORTAL: '12', TEST_SCRYPT_N: '' } });
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

describe('portal session', () => {
  it('logs in with email and password and sets an HttpOnly, SameSite=Lax, Secure session cookie', async () => {
    const res = await login();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ user: { email }, brand: { id: brandId, name: 'Acme' } });
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toMatch(/^svc_session=[A-Za-z0-9_-]{40,};/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    // PUBLIC_BASE_URL is https: Secure, though this request came over plain HTTP (a TLS proxy not in TRUST_PROXY).
    expect(setCookie).toContain('Secure');
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
    const out = await t.request({ method: 'POST', url: '/api/client/auth/logout', headers: { cookie: a, origin: 'https://svc.test' } });
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
    const own = await t.request({ method: 'POST', url: '/api/client/auth/logout', headers: { cookie: c, origin: 'https://svc.test' } });
    expect(own.statusCode).toBe(200);
  });

  it('refuses a cookie-authenticated write without Origin unless its Referer is this service', async () => {
    const c = cookieOf(await login());
    const logout = (headers: Record<string, string>) => t.request({ method: 'POST', url: '/api/client/auth/logout', headers: { cookie: c, ...headers } });
    const refused: Record<string, string>[] = [{ referer: 'https://evil.example/' }, {}, { referer: 'https://svc.test.evil.example/portal/' }, { referer: 'not a url' }];
    for (const headers of refused) {
      const res = await logout(headers);
      expect([res.statusCode, res.json()]).toEqual([403, { error: 'forbidden_origin' }]);
    }
    expect((await me(c)).statusCode).toBe(200);
    expect((await logout({ referer: 'https://svc.test/portal/links' })).statusCode).toBe(200);
    expect((await me(c)).statusCode).toBe(401);
  });
});

describe('portal requests per session (RATE_LIMIT_PORTAL)', () => {
  it('lets a session make 12 requests a minute with RateLimit headers, then 429 with Retry-After; another session is counted apart', async () => {
    // Counted per minute: wait when less than 10 s of this one is left.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 10_000) await new Promise((r) => setTimeout(r, left + 50));
    const c = cookieOf(await login());
    for (let n = 1; n <= 12; n++) {
      const res = await me(c);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('12');
      expect(res.headers['ratelimit-remaining']).toBe(String(12 - n));
      expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
    }
    const refused = await me(c);
    expect([refused.statusCode, refused.json()]).toEqual([429, { error: 'rate_limited' }]);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect((await me(cookieOf(await login()))).statusCode).toBe(200);
  });
});

describe('portal passwords and ended sessions', () => {
  /** A hash as the service made them before (scrypt N=2^14), in the stored form. */
  const oldHash = (pw: string) => {
    const salt = randomBytes(16);
    const hash = scryptSync(pw, salt, 32, { N: 16384, r: 8, p: 1 });
    return ['scrypt', 16384, 8, 1, salt.toString('base64'), hash.toString('base64')].join('$');
  };
  const storedHash = async (address: string) =>
    (await t.services.db.selectFrom('portal_users').select('password_hash').where('email', '=', address).executeTakeFirstOrThrow()).password_hash;

  it('hashes new passwords with scrypt N=2^17, r=8, p=1', async () => {
    expect(await storedHash(email)).toMatch(/^scrypt\$131072\$8\$1\$/);
  });

  it('still logs in with a hash of the old parameters, and hashes it again with today’s at that login', async () => {
    const address = 'veteran@acme.test';
    const created = await t.request({ method: 'POST', url: `/api/internal/brands/${brandId}/portal-users`, admin: true, payload: { email: address, password } });
    expect(created.statusCode).toBe(201);
    await t.services.db.updateTable('portal_users').set({ password_hash: oldHash(password) }).where('email', '=', address).execute();
    const wrong = await t.request({ method: 'POST', url: '/api/client/auth/login', payload: { email: address, password: 'not it at all' } });
    expect(wrong.statusCode).toBe(401);
    expect(await storedHash(address)).toMatch(/^scrypt\$16384\$/); // a failed login changes nothing
    const res = await t.request({ method: 'POST', url: '/api/client/auth/login', payload: { email: address, password } });
    expect(res.statusCode).toBe(200);
    const rehashed = await storedHash(address);
    expect(rehashed).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(await verifyPassword(password, rehashed)).toBe(true);
    expect((await t.request({ method: 'POST', url: '/api/client/auth/login', payload: { email: address, password } })).statusCode).toBe(200);
  });

  it('purges expired and revoked sessions in bounded batches, keeping live ones', async () => {
    const [live, expired, revoked] = [cookieOf(await login()), cookieOf(await login()), cookieOf(await login())];
    await t.services.db.updateTable('portal_sessions').set({ expires_at: new Date(Date.now() - 1000) }).where('token_hash', '=', tokenHash(expired)).execute();
    await t.services.db.updateTable('portal_sessions').set({ revoked_at: new Date() }).where('token_hash', '=', tokenHash(revoked)).execute();
    const ended = () =>
      t.services.db
        .selectFrom('portal_sessions')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where((eb) => eb.or([eb('expires_at', '<=', new Date()), eb('revoked_at', 'is not', null)]))
        .executeTakeFirstOrThrow();
    const before = Number((await ended()).n);
    expect(before).toBeGreaterThanOrEqual(2);
    // Two rows a statement: several statements, until none is left (the service's own purge may take some first).
    const purged = await new PortalSessions(t.services.db, t.services.recordChanges).purgeEnded(2);
    expect(purged).toBeLessThanOrEqual(before);
    expect(Number((await ended()).n)).toBe(0);
    const hashes = (await t.services.db.selectFrom('portal_sessions').select('token_hash').execute()).map((r) => r.token_hash);
    expect(hashes).toContain(tokenHash(live));
    expect(hashes).not.toContain(tokenHash(expired));
    expect(hashes).not.toContain(tokenHash(revoked));
    expect((await me(live)).statusCode).toBe(200);
  });
});
