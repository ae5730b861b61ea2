import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_LIMITS } from '../../src/portal/login-limit';
import { keyedHash, sha256 } from '../../src/secrets';
import { createBrand } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { createPortalUser, PORTAL_PASSWORD } from './helpers';

let t: TestService;

beforeAll(async () => {
  t = await startTestService({ workers: false });
  const brand = await createBrand(t, { name: 'Acme' });
  for (const email of ['locked@acme.test', 'regular@acme.test', 'other@acme.test', 'owner@acme.test', 'late@acme.test']) await createPortalUser(t, brand.id, email);
});
afterAll(async () => destroyTestService(t));

/** The login limiter's name for an IP or email in its Redis keys. */
const hashed = (value: string) => keyedHash(t.config.secretKey, value, 'base64url').slice(0, 22);

const login = (email: string, password: string, remoteAddress = '10.0.0.1') =>
  t.request({ method: 'POST', url: '/api/client/auth/login', payload: { email, password }, remoteAddress });

describe('login rate limits', () => {
  it('refuses an account with 429 and Retry-After once its failures are spent, even with the right password', async () => {
    for (let i = 0; i < LOGIN_LIMITS.perAccount; i++) expect((await login('locked@acme.test', 'wrong password!')).statusCode).toBe(401);
    const refused = await login('Locked@Acme.test', PORTAL_PASSWORD);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ error: 'rate_limited' });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(LOGIN_LIMITS.windowMs / 1000);
    // Another account from the same address is not affected.
    expect((await login('regular@acme.test', PORTAL_PASSWORD)).statusCode).toBe(200);
  });

  it('locks the account for that client IP only: the right password from another IP still logs in', async () => {
    const attacker = '10.0.9.1';
    for (let i = 0; i < LOGIN_LIMITS.perAccount; i++) expect((await login('owner@acme.test', 'wrong password!', attacker)).statusCode).toBe(401);
    expect((await login('owner@acme.test', PORTAL_PASSWORD, attacker)).statusCode).toBe(429);
    const owner = await login('owner@acme.test', PORTAL_PASSWORD, '10.0.9.2');
    expect(owner.statusCode, owner.body).toBe(200);
    // Still locked for the attacker's address.
    expect((await login('owner@acme.test', PORTAL_PASSWORD, attacker)).statusCode).toBe(429);
  });

  it('counts failures only: successful logins give their attempt back', async () => {
    for (let i = 0; i < LOGIN_LIMITS.perAccount + 5; i++) {
      expect((await login('regular@acme.test', PORTAL_PASSWORD, '10.0.0.2')).statusCode).toBe(200);
    }
    for (let i = 0; i < LOGIN_LIMITS.perAccount - 1; i++) expect((await login('regular@acme.test', 'wrong password!', '10.0.0.2')).statusCode).toBe(401);
    expect((await login('regular@acme.test', PORTAL_PASSWORD, '10.0.0.2')).statusCode).toBe(200);
  });

  it('refuses an address whose failures across accounts are spent, other addresses not', async () => {
    const ip = '10.0.0.3';
    for (let i = 0; i < LOGIN_LIMITS.perIp; i++) expect((await login(`nobody${i}@acme.test`, 'wrong password!', ip)).statusCode).toBe(401);
    const refused = await login('other@acme.test', PORTAL_PASSWORD, ip);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await login('other@acme.test', PORTAL_PASSWORD, '10.0.0.4')).statusCode).toBe(200);
  });

  it('lets concurrent guesses take no more than the limit', async () => {
    const answers = await Promise.all(
      Array.from({ length: LOGIN_LIMITS.perAccount * 2 }, () => login('other@acme.test', 'wrong password!', '10.0.0.5')),
    );
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 401)).toHaveLength(LOGIN_LIMITS.perAccount);
    expect(statuses.filter((s) => s === 429)).toHaveLength(LOGIN_LIMITS.perAccount);
  });

  it('locks for the whole window from the failure that spends the limit, however early the first one came', async () => {
    const address = '10.0.7.1';
    for (let i = 0; i < LOGIN_LIMITS.perAccount - 1; i++) expect((await login('late@acme.test', 'wrong password!', address)).statusCode).toBe(401);
    // As if the first failure came 14 minutes ago: one minute of the window left.
    const [key] = (await t.services.redis.keys(`${t.config.queuePrefix}:login-limit:account:*`)).filter((k) => k.endsWith(`:ip:${hashed(address)}`));
    await t.services.redis.pexpire(key!, 60_000);
    expect((await login('late@acme.test', 'wrong password!', address)).statusCode).toBe(401); // the tenth
    const refused = await login('late@acme.test', PORTAL_PASSWORD, address);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(LOGIN_LIMITS.windowMs / 1000 - 60);
  });

  it('a right password one failure short of the lock neither locks nor pushes the earlier failures\' window out', async () => {
    const address = '10.0.7.2';
    for (let i = 0; i < LOGIN_LIMITS.perAccount - 1; i++) expect((await login('late@acme.test', 'wrong password!', address)).statusCode).toBe(401);
    const [key] = (await t.services.redis.keys(`${t.config.queuePrefix}:login-limit:account:*`)).filter((k) => k.endsWith(`:ip:${hashed(address)}`));
    await t.services.redis.pexpire(key!, 60_000);
    for (let i = 0; i < 3; i++) expect((await login('late@acme.test', PORTAL_PASSWORD, address)).statusCode).toBe(200);
    expect(await t.services.redis.get(key!)).toBe(String(LOGIN_LIMITS.perAccount - 1));
    expect(await t.services.redis.pttl(key!)).toBeLessThanOrEqual(60_000);
  });

  it("keeps its counters under the deployment's key prefix", async () => {
    const keys = await t.services.redis.keys(`${t.config.queuePrefix}:login-limit:*`);
    expect(keys.some((k) => k.includes(`:account:${hashed('locked@acme.test')}:ip:${hashed('10.0.0.1')}`))).toBe(true);
    expect(keys.some((k) => k.endsWith(`:ip:${hashed('10.0.0.3')}`))).toBe(true);
    // IPs and emails are keyed hashes (SECRET_KEY): neither is in a key, nor its plain SHA-256.
    const all = keys.join(' ');
    for (const plain of ['10.0.0.', 'acme.test', sha256('locked@acme.test')]) expect(all).not.toContain(plain);
  });
});
