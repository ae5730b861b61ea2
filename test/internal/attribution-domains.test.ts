import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { createSigner } from 'fast-jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeHostname } from '../../src/attribution/domains/hostname';
import { dnsInstructions } from '../../src/attribution/domains/verification';
import { ConfigError, loadConfig } from '../../src/config';
import { createDomain, createLink, type DomainItem } from '../helpers/attribution-fixtures';
import { createBrand, createCreator } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: false });
});
afterAll(async () => destroyTestService(t));

const url = '/api/internal/attribution-domains';

describe('internal attribution domains (SPEC 4.5, CONTRACT 8)', () => {
  it('needs the admin JWT', async () => {
    expect((await t.request({ method: 'GET', url })).statusCode).toBe(401);
    const brandToken = createSigner({ key: t.config.adminJwtSecret, algorithm: 'HS256', expiresIn: 3600_000 })({ user_typ: 'brand' });
    const res = await t.request({ method: 'POST', url, headers: { authorization: `Bearer ${brandToken}` }, payload: { hostname: 'x.test' } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'forbidden' });
  });

  it('registers a shared domain, normalised, pending, with the DNS records to create', async () => {
    const domain = await createDomain(t, { hostname: '  WWW.Maya.Link. ' });
    expect(domain).toMatchObject({
      hostname: 'maya.link',
      shared: true,
      brand_id: null,
      verification: { status: 'pending', checked_at: null },
      certificate: { status: 'pending' },
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
    // A cursor that does not decode is paging out of range (CONTRACT 10).
    const garbage = await t.request({ method: 'GET', url, admin: true, query: { cursor: 'garbage' } });
    expect([garbage.statusCode, garbage.json()]).toEqual([400, expect.objectContaining({ error: 'invalid_parameter', param: 'cursor' })]);
  });

  it('checks with no network: stays pending with the instructions, never an error', async () => {
    const domain = await createDomain(t, { hostname: 'offline-check.example' });
    const res = await t.request({ method: 'POST', url: `${url}/${domain.id}/check`, admin: true });
    expect(res.statusCode).toBe(200);
    const checked = res.json();
    expect(checked).toMatchObject({ id: domain.id, verification: { status: 'pending' }, certificate: { status: 'pending' }, dns: domain.dns });
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

/**
 * The verified path against a real DNS server on 127.0.0.1 (DNS_SERVERS): a minimal
 * UDP responder for A, TXT and CNAME questions, answering NXDOMAIN for unknown names.
 */
describe('domain verification by DNS look-ups', () => {
  const zone = new Map<string, { A?: string[]; TXT?: string[]; CNAME?: string }>();
  let dns: Socket;
  let v: TestService;
  /** When set, the server drops every question, as an unreachable name server would. */
  let silent = false;

  beforeAll(async () => {
    dns = createSocket('udp4');
    dns.on('message', (query, peer) => {
      if (!silent) dns.send(answer(query, zone), peer.port, peer.address);
    });
    await new Promise<void>((resolve) => dns.bind(0, '127.0.0.1', resolve));
    const { port } = dns.address() as AddressInfo;
    v = await startTestService({ workers: false, env: { DNS_SERVERS: `127.0.0.1:${port}` } });
  });
  afterAll(async () => {
    await destroyTestService(v);
    await new Promise<void>((resolve) => dns.close(() => resolve()));
  });

  const check = async (id: string) => {
    const res = await v.request({ method: 'POST', url: `${url}/${id}/check`, admin: true });
    expect(res.statusCode).toBe(200);
    return res.json() as DomainItem;
  };

  it('verifies once the TXT and CNAME records exist, and returns to pending when one goes', async () => {
    const domain = await createDomain(v, { hostname: 'links.maya.example' });
    const [txt, cname] = domain.dns;
    expect(await check(domain.id)).toMatchObject({ verification: { status: 'pending' } });

    zone.set(txt!.name, { TXT: ['unrelated=1', txt!.value] });
    expect((await check(domain.id)).verification.status).toBe('pending');
    zone.set(cname!.name, { CNAME: `${cname!.value}.` });
    const verified = await check(domain.id);
    expect(verified).toMatchObject({ verification: { status: 'verified' }, certificate: { status: 'unmanaged' } });

    // Look-ups that fail prove nothing: the status stays.
    silent = true;
    const unanswered = await check(domain.id);
    silent = false;
    expect(unanswered).toMatchObject({ verification: { status: 'verified' }, certificate: { status: 'unmanaged' } });
    expect(unanswered.verification.checked_at).not.toBe(verified.verification.checked_at);

    zone.set(txt!.name, { TXT: ['svc-verify=someone-else'] });
    expect(await check(domain.id)).toMatchObject({ verification: { status: 'pending' }, certificate: { status: 'pending' } });
  });

  it('accepts an apex ALIAS flattened into the service host addresses', async () => {
    const domain = await createDomain(v, { hostname: 'maya-apex.example' });
    zone.set('svc.test', { A: ['203.0.113.7'] });
    zone.set(domain.dns[0]!.name, { TXT: [domain.dns[0]!.value] });
    zone.set('maya-apex.example', { A: ['203.0.113.7'] });
    expect((await check(domain.id)).verification.status).toBe('verified');
    zone.set('maya-apex.example', { A: ['198.51.100.1'] });
    expect((await check(domain.id)).verification.status).toBe('pending');
  });
});

/** A DNS response to `query` from `zone` (RFC 1035 section 4.1), without name compression except for the question. */
function answer(query: Buffer, zone: Map<string, { A?: string[]; TXT?: string[]; CNAME?: string }>): Buffer {
  const labels: string[] = [];
  let at = 12;
  while (query[at]! > 0) {
    labels.push(query.subarray(at + 1, at + 1 + query[at]!).toString());
    at += query[at]! + 1;
  }
  const qtype = query.readUInt16BE(at + 1);
  const question = query.subarray(12, at + 5);
  const records = zone.get(labels.join('.').toLowerCase());
  const rdatas: Buffer[] = [];
  let type = qtype;
  if (records?.CNAME) {
    type = 5;
    rdatas.push(encodeName(records.CNAME));
  } else if (qtype === 1) {
    for (const a of records?.A ?? []) rdatas.push(Buffer.from(a.split('.').map(Number)));
  } else if (qtype === 16) {
    for (const txt of records?.TXT ?? []) rdatas.push(Buffer.concat([Buffer.from([txt.length]), Buffer.from(txt)]));
  }
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  header.writeUInt16BE(0x8180 | (records ? 0 : 3), 2); // response, recursion available; NXDOMAIN for unknown names
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(rdatas.length, 6);
  const answers = rdatas.map((rdata) => {
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // the question's name
    rr.writeUInt16BE(type, 2);
    rr.writeUInt16BE(1, 4);
    rr.writeUInt32BE(60, 6);
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([rr, rdata]);
  });
  return Buffer.concat([header, question, ...answers]);
}

function encodeName(name: string): Buffer {
  const parts = name.replace(/\.$/, '').split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
  return Buffer.concat([...parts, Buffer.from([0])]);
}
