import { createSigner } from 'fast-jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeHostname } from '../../src/attribution/domains/hostname';
import { dnsInstructions } from '../../src/attribution/domains/verification';
import { ConfigError, loadConfig } from '../../src/config';
import { createDomain, createLink, type DomainItem } from '../helpers/attribution-fixtures';
import { startDnsZone } from '../helpers/dns-zone';
import { createBrand, createCreator } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: false });
});
afterAll(async () => destroyTestService(t));

const url = '/api/internal/attribution-domains';

describe('internal attribution domains', () => {
  it('needs the admin JWT', async () => {
    expect((await t.request({ method: 'GET', url })).statusCode).toBe(401);
    const brandToken = createSigner({ key: t.config.adminJwtSecret, algorithm: 'HS256', expiresIn: 3600_000 })({ user_typ: 'brand' });
    const res = await t.request({ method: 'POST', url, headers: { authorization: `Bearer ${brandToken}` }, payload: { hostname: 'x.test' } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'forbidden' });
  });

  it('registers a shared domain, normalised, served at once (the operator is trusted), with the DNS records that route it', async () => {
    const domain = await createDomain(t, { hostname: '  WWW.Maya.Link. ' });
    expect(domain).toMatchObject({
      hostname: 'maya.link',
      shared: true,
      brand_id: null,
      registered_by: 'operator',
      served: true,
      taken: false,
      verification: { status: 'pending', checked_at: null, records_missing_since: null },
      certificate: { status: 'unmanaged' },
    });
    expect(typeof domain.id).toBe('string');
    const token = domain.dns[0]!.value.replace('svc-verify=', '');
    expect(token).toMatch(/^[0-9a-f]{32}$/);
    // PUBLIC_BASE_URL of the test service is http://svc.test.
    expect(domain.dns).toEqual([
      { type: 'TXT', name: '_svc-verify.maya.link', value: `svc-verify=${token}` },
      { type: 'CNAME', name: 'maya.link', value: 'svc.test' },
    ]);
  });

  it("registers a brand's custom domain", async () => {
    const brand = await createBrand(t);
    const domain = await createDomain(t, { hostname: 'go.acme-shop.com', brand_id: brand.id });
    expect(domain).toMatchObject({ hostname: 'go.acme-shop.com', shared: false, brand_id: brand.id });
    const unknown = await t.request({ method: 'POST', url, admin: true, payload: { hostname: 'b.acme.com', brand_id: 'nope' } });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json()).toEqual({ error: 'invalid_request', details: [{ path: 'brand_id', message: 'unknown brand' }] });
  });

  it('answers 409 domain_taken for a hostname already registered, whatever its spelling', async () => {
    await createDomain(t, { hostname: 'taken.example' });
    for (const hostname of ['taken.example', 'WWW.TAKEN.EXAMPLE', 'taken.example.']) {
      const res = await t.request({ method: 'POST', url, admin: true, payload: { hostname } });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({ error: 'domain_taken' });
    }
  });

  it('answers 422 invalid_request for what is not a host name', async () => {
    for (const hostname of ['', 'localhost', 'https://x.example/', 'x.example/path', '10.0.0.1', 'a..example', '-a.example', 'a_b.example', 'sp ace.example', `${'a'.repeat(64)}.example`]) {
      const res = await t.request({ method: 'POST', url, admin: true, payload: { hostname } });
      expect(res.statusCode, hostname).toBe(422);
      expect(res.json().error).toBe('invalid_request');
      expect(res.json().details.length).toBeGreaterThan(0);
    }
    expect((await t.request({ method: 'POST', url, admin: true, payload: {} })).statusCode).toBe(422);
  });

  it('normalises host names to lower-case ASCII without www. and trailing dot', () => {
    expect(normalizeHostname('Shop.Example.COM.')).toBe('shop.example.com');
    expect(normalizeHostname('www.example.com')).toBe('example.com');
    expect(normalizeHostname('münchen.example')).toBe('xn--mnchen-3ya.example');
    expect(normalizeHostname('example')).toBeNull();
    expect(normalizeHostname('1.2.3.4')).toBeNull();
  });

  it('takes name servers for look-ups from DNS_SERVERS, refusing what is not ip or ip:port', () => {
    const env = { NODE_ENV: 'test', ADMIN_JWT_SECRET: 'x'.repeat(16), SECRET_KEY: 'y'.repeat(16) };
    expect(loadConfig({ ...env, DNS_SERVERS: '127.0.0.1:5353, ::1, [::1]:53' }).dnsServers).toEqual(['127.0.0.1:5353', '::1', '[::1]:53']);
    expect(loadConfig(env).dnsServers).toBeUndefined();
    expect(() => loadConfig({ ...env, DNS_SERVERS: 'dns.example:53' })).toThrow(ConfigError);
  });

  it('tells the owner an A or AAAA record when the service is reached by IP', () => {
    expect(dnsInstructions('a.example', 'tok', 'http://203.0.113.9:3000')[1]).toEqual({ type: 'A', name: 'a.example', value: '203.0.113.9' });
    expect(dnsInstructions('a.example', 'tok', 'https://[2001:db8::1]')[1]).toEqual({ type: 'AAAA', name: 'a.example', value: '2001:db8::1' });
  });

  it('lists every domain by hostname with paging and the hosting-provider state', async () => {
    const res = await t.request({ method: 'GET', url, admin: true });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.hosting).toEqual({ configured: false, provider: null });
    const all: DomainItem[] = body.data;
    expect(all.map((d) => d.hostname)).toEqual([...all.map((d) => d.hostname)].sort());
    expect(all.map((d) => d.hostname)).toEqual(expect.arrayContaining(['maya.link', 'go.acme-shop.com']));

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await t.request({ method: 'GET', url, admin: true, query: { limit: '2', ...(cursor ? { cursor } : {}) } });
      const json = page.json();
      expect(json.data.length).toBeLessThanOrEqual(2);
      seen.push(...json.data.map((d: DomainItem) => d.hostname));
      expect(json.pagination.has_more).toBe(json.pagination.next_cursor !== null);
      cursor = json.pagination.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.map((d) => d.hostname));

    for (const query of [{ limit: '0' }, { limit: '101' }] as Record<string, string>[]) {
      const bad = await t.request({ method: 'GET', url, admin: true, query });
      expect(bad.statusCode, JSON.stringify(query)).toBe(422);
      expect(bad.json().error).toBe('invalid_request');
    }
    // A cursor that does not decode is paging out of range.
    const garbage = await t.request({ method: 'GET', url, admin: true, query: { cursor: 'garbage' } });
    expect([garbage.statusCode, garbage.json()]).toEqual([400, expect.objectContaining({ error: 'invalid_parameter', param: 'cursor' })]);
  });

  it('checks with no network: stays pending with the instructions, never an error', async () => {
    const domain = await createDomain(t, { hostname: 'offline-check.example' });
    const res = await t.request({ method: 'POST', url: `${url}/${domain.id}/check`, admin: true });
    expect(res.statusCode).toBe(200);
    const checked = res.json();
    expect(checked).toMatchObject({ id: domain.id, served: true, verification: { status: 'pending' }, certificate: { status: 'unmanaged' }, dns: domain.dns });
    expect(Date.parse(checked.verification.checked_at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('deletes a domain no link uses (204), refuses one with links (409 domain_has_links), 404 for unknown ids', async () => {
    const brand = await createBrand(t);
    const creator = await createCreator(t, { name: 'Dana' });
    const used = await createDomain(t, { hostname: 'used.example' });
    await createLink(t, { brand_id: brand.id, creator_id: creator.id, domain_id: used.id });
    const refused = await t.request({ method: 'DELETE', url: `${url}/${used.id}`, admin: true });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ error: 'domain_has_links' });

    const unused = await createDomain(t, { hostname: 'unused.example', brand_id: brand.id });
    expect((await t.request({ method: 'DELETE', url: `${url}/${unused.id}`, admin: true })).statusCode).toBe(204);
    for (const req of [
      { method: 'DELETE' as const, url: `${url}/${unused.id}` },
      { method: 'GET' as const, url: `${url}/${unused.id}` },
      { method: 'POST' as const, url: `${url}/nope/check` },
    ]) {
      const res = await t.request({ ...req, admin: true });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'not_found' });
    }
  });
});

/** The verified path against a real DNS server on 127.0.0.1 (DNS_SERVERS, test/helpers/dns-zone.ts). */
describe('domain verification by DNS look-ups', () => {
  let dns: Awaited<ReturnType<typeof startDnsZone>>;
  let v: TestService;

  beforeAll(async () => {
    dns = await startDnsZone();
    v = await startTestService({ workers: false, env: { DNS_SERVERS: dns.server } });
  });
  afterAll(async () => {
    await destroyTestService(v);
    await dns.close();
  });

  const check = async (id: string) => {
    const res = await v.request({ method: 'POST', url: `${url}/${id}/check`, admin: true });
    expect(res.statusCode).toBe(200);
    return res.json() as DomainItem;
  };

  it('verifies once the TXT and CNAME records exist, and stays verified, saying since when, when one goes', async () => {
    const domain = await createDomain(v, { hostname: 'links.maya.example' });
    const [txt, cname] = domain.dns;
    expect(await check(domain.id)).toMatchObject({ verification: { status: 'pending' } });

    dns.zone.set(txt!.name, { TXT: ['unrelated=1', txt!.value] });
    expect((await check(domain.id)).verification.status).toBe('pending');
    dns.zone.set(cname!.name, { CNAME: `${cname!.value}.` });
    const verified = await check(domain.id);
    expect(verified).toMatchObject({ verification: { status: 'verified', records_missing_since: null }, certificate: { status: 'unmanaged' } });

    // Look-ups that fail prove nothing: the status stays.
    dns.state.silent = true;
    const unanswered = await check(domain.id);
    dns.state.silent = false;
    expect(unanswered).toMatchObject({ verification: { status: 'verified', records_missing_since: null }, certificate: { status: 'unmanaged' } });
    expect(unanswered.verification.checked_at).not.toBe(verified.verification.checked_at);

    dns.zone.set(txt!.name, { TXT: ['svc-verify=someone-else'] });
    const gone = await check(domain.id);
    expect(gone).toMatchObject({ served: true, verification: { status: 'verified' }, certificate: { status: 'unmanaged' } });
    expect(gone.verification.records_missing_since).toBe(gone.verification.checked_at);
    // The first check that missed them is the date shown, not the latest one.
    const later = await check(domain.id);
    expect(later.verification.records_missing_since).toBe(gone.verification.records_missing_since);
    dns.zone.set(txt!.name, { TXT: [txt!.value] });
    expect((await check(domain.id)).verification).toMatchObject({ status: 'verified', records_missing_since: null });
  });

  it('accepts an apex ALIAS flattened into the service host addresses', async () => {
    const domain = await createDomain(v, { hostname: 'maya-apex.example' });
    dns.zone.set('svc.test', { A: ['203.0.113.7'] });
    dns.zone.set(domain.dns[0]!.name, { TXT: [domain.dns[0]!.value] });
    dns.zone.set('maya-apex.example', { A: ['198.51.100.1'] });
    expect((await check(domain.id)).verification.status).toBe('pending');
    dns.zone.set('maya-apex.example', { A: ['203.0.113.7'] });
    expect((await check(domain.id)).verification.status).toBe('verified');
  });
});
