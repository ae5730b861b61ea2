import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDomain, createLink } from '../helpers/attribution-fixtures';
import { startDnsZone } from '../helpers/dns-zone';
import { createBrand, createCreator } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { createPortalUser, type Portal, portal, portalLogin } from './helpers';

let t: TestService;
let dns: Awaited<ReturnType<typeof startDnsZone>>;
let a: Portal;
let b: Portal;
let cookieA: string;
const fx = {} as { brandA: string; brandB: string; creator: string; shared: { id: string; hostname: string }; ownB: { id: string; hostname: string } };
const host = (name: string) => `${name}-${randomBytes(3).toString('hex')}.test`;

beforeAll(async () => {
  dns = await startDnsZone();
  t = await startTestService({ workers: false, env: { DNS_SERVERS: dns.server, RESERVED_HOSTNAMES: 'links.reserved.example, Other.Reserved.Example' } });
  fx.brandA = (await createBrand(t, { name: 'Acme' })).id;
  fx.brandB = (await createBrand(t, { name: 'Bravo' })).id;
  fx.creator = (await createCreator(t, { name: 'Anna Berg' })).id;
  fx.shared = await createDomain(t, { hostname: host('shared') });
  fx.ownB = await createDomain(t, { hostname: host('bravo'), brand_id: fx.brandB });
  await createPortalUser(t, fx.brandA, 'a@acme.test');
  await createPortalUser(t, fx.brandB, 'b@bravo.test');
  cookieA = await portalLogin(t, 'a@acme.test');
  a = portal(t, cookieA);
  b = portal(t, await portalLogin(t, 'b@bravo.test'));
});
afterAll(async () => {
  await destroyTestService(t);
  await dns.close();
});

describe('portal domains', () => {
  let created: { id: string; hostname: string };

  it('registers a custom domain for the session brand, with DNS instructions', async () => {
    const hostname = host('go.acme');
    const res = await a.send('POST', '/domains', { hostname: hostname.toUpperCase() });
    expect(res.statusCode, res.body).toBe(201);
    created = res.json();
    expect(created).toMatchObject({
      hostname,
      shared: false,
      brand_id: fx.brandA,
      registered_by: 'portal',
      served: false,
      taken: false,
      verification: { status: 'pending', checked_at: null, records_missing_since: null },
      certificate: { status: 'pending' },
    });
    expect(res.json().dns.length).toBeGreaterThan(0);
    // Already claimed by the same brand.
    const again = await a.send('POST', '/domains', { hostname });
    expect([again.statusCode, again.json()]).toEqual([409, { error: 'domain_taken' }]);
  });

  it("refuses with 422 invalid_domain the service's own host, localhost names, IP literals, single labels and RESERVED_HOSTNAMES", async () => {
    for (const hostname of [
      'svc.test',
      'WWW.svc.test',
      'localhost',
      'localhost.',
      'shop.localhost',
      'a.b.LOCALHOST',
      '127.0.0.1',
      '10.0.0.1',
      '::1',
      '[::1]',
      '2001:db8::1',
      'intranet',
      'links.reserved.example',
      'other.reserved.example',
      'WWW.links.reserved.example',
      'not a host',
      'https://x.example/',
    ]) {
      const res = await a.send('POST', '/domains', { hostname });
      expect([res.statusCode, res.json()], hostname).toEqual([422, { error: 'invalid_domain' }]);
    }
    // The operator is trusted with reserved names; still never the service's own host.
    const other = await createBrand(t, { name: 'Reserved Co' });
    await createDomain(t, { hostname: 'links.reserved.example', brand_id: other.id });
    const operator = await t.request({ method: 'POST', url: '/api/internal/attribution-domains', admin: true, payload: { hostname: 'svc.test' } });
    expect(operator.statusCode).toBe(409);
    expect((await a.get('/domains')).json().data.map((d: { hostname: string }) => d.hostname)).not.toContain('svc.test');
  });

  it('lists shared domains plus its own, never another brand’s', async () => {
    const list = (await a.get('/domains')).json();
    expect(list.data.map((d: { id: string }) => d.id).sort()).toEqual([fx.shared.id, created.id].sort());
    expect(list.data.find((d: { id: string }) => d.id === fx.shared.id)).toMatchObject({ shared: true, brand_id: null });
    expect((await b.get('/domains')).json().data.map((d: { id: string }) => d.id).sort()).toEqual([fx.shared.id, fx.ownB.id].sort());
  });

  it('re-checks its own domain', async () => {
    const res = await a.send('POST', `/domains/${created.id}/check`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: created.id, verification: { status: 'pending' } });
    expect(res.json().verification.checked_at).toEqual(expect.any(String));
  });

  it('never changes a shared domain (403) or another brand’s (404, as an unknown id)', async () => {
    for (const path of [`/domains/${fx.shared.id}/check`, `/domains/${fx.shared.id}`]) {
      const res = await a.send(path.endsWith('check') ? 'POST' : 'DELETE', path);
      expect(res.statusCode, path).toBe(403);
      expect(res.json()).toEqual({ error: 'forbidden' });
    }
    for (const id of [fx.ownB.id, 'no-such-domain']) {
      expect((await a.send('POST', `/domains/${id}/check`)).json()).toEqual({ error: 'not_found' });
      expect((await a.send('DELETE', `/domains/${id}`)).statusCode).toBe(404);
    }
    expect((await b.send('DELETE', `/domains/${created.id}`)).statusCode).toBe(404);
    const still = await t.services.db.selectFrom('domains').select('id').where('id', 'in', [fx.shared.id, fx.ownB.id, created.id]).execute();
    expect(still).toHaveLength(3);
  });

  it('refuses to delete a domain links still use: 409 domain_has_links', async () => {
    const link = await createLink(t, { brand_id: fx.brandA, creator_id: fx.creator, domain_id: created.id, slug: 'anna' });
    const res = await a.send('DELETE', `/domains/${created.id}`);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'domain_has_links' });
    await t.services.db.deleteFrom('links').where('id', '=', link.id).execute();
    expect((await a.send('DELETE', `/domains/${created.id}`)).statusCode).toBe(204);
    expect((await a.get('/domains')).json().data.map((d: { id: string }) => d.id)).toEqual([fx.shared.id]);
  });

  it('refuses writes from a foreign Origin', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/client/attribution/domains',
      headers: { cookie: cookieA, origin: 'https://evil.example' },
      payload: { hostname: host('evil') },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'forbidden_origin' });
    const cross = await t.request({
      method: 'DELETE',
      url: `/api/client/attribution/domains/${fx.shared.id}`,
      headers: { cookie: cookieA, 'sec-fetch-site': 'cross-site' },
    });
    expect(cross.statusCode).toBe(403);
    expect((await a.get('/domains')).json().data).toHaveLength(1);
  });
});

describe('claims: a pending portal domain reserves nothing; the first to verify takes it', () => {
  type Item = { id: string; hostname: string; served: boolean; taken: boolean; dns: { type: string; name: string; value: string }[]; verification: { status: string; records_missing_since: string | null; checked_at: string | null } };
  const claim = async (p: Portal, hostname: string) => {
    const res = await p.send('POST', '/domains', { hostname });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as Item;
  };
  const listed = async (p: Portal, id: string) => ((await p.get('/domains')).json().data as Item[]).find((d) => d.id === id)!;
  const click = (domain: string) => t.request({ method: 'POST', url: '/api/public/attribution/clicks', payload: { domain, slug: 'anna' } });
  const visit = (hostname: string, url = '/anna') => t.request({ method: 'GET', url, headers: { host: hostname } });

  it('serves a claim only once its check verifies; another brand’s claim of the host then answers 409 domain_taken', async () => {
    const hostname = host('go.vanity');
    const squat = await claim(b, hostname);
    const mine = await claim(a, hostname); // the squatter's claim blocks nobody
    expect(mine.id).not.toBe(squat.id);
    expect(mine.dns[0]!.value).not.toBe(squat.dns[0]!.value);
    await createLink(t, { brand_id: fx.brandA, creator_id: fx.creator, domain_id: mine.id, slug: 'anna', destination_url: 'https://acme.example/anna' });

    // Pending: an unknown host (today's routes answer) and nothing for POST /clicks.
    expect((await click(hostname)).json()).toEqual({ error: 'link_not_found' });
    expect((await click(hostname)).statusCode).toBe(404);
    const pending = await visit(hostname);
    expect([pending.statusCode, pending.json()]).toEqual([404, { error: 'not_found' }]);
    expect((await visit(hostname, '/healthz')).headers['content-type']).toMatch(/^application\/json/);

    // Brand A creates its records; the squatter cannot create its own TXT record.
    const [txt, routing] = mine.dns;
    dns.zone.set(txt!.name, { TXT: [txt!.value] });
    dns.zone.set(routing!.name, { CNAME: `${routing!.value}.` });
    expect((await b.send('POST', `/domains/${squat.id}/check`)).json()).toMatchObject({ served: false, verification: { status: 'pending' } });
    const verified = await a.send('POST', `/domains/${mine.id}/check`);
    expect(verified.statusCode).toBe(200);
    expect(verified.json()).toMatchObject({ served: true, taken: false, verification: { status: 'verified' }, certificate: { status: 'unmanaged' } });

    const served = await visit(hostname);
    expect(served.statusCode).toBe(302);
    expect(served.headers.location).toMatch(/^https:\/\/acme\.example\/anna\?svc_cid=svc_/);
    expect((await click(hostname)).statusCode).toBe(200);

    // The other claim is taken: its check says so, its list item too; nobody may register the host now.
    const late = await b.send('POST', `/domains/${squat.id}/check`);
    expect([late.statusCode, late.json()]).toEqual([409, { error: 'domain_taken' }]);
    expect(await listed(b, squat.id)).toMatchObject({ served: false, taken: true, verification: { status: 'pending' } });
    expect((await b.send('POST', '/domains', { hostname })).json()).toEqual({ error: 'domain_taken' });
    const operator = await t.request({ method: 'POST', url: '/api/internal/attribution-domains', admin: true, payload: { hostname } });
    expect([operator.statusCode, operator.json()]).toEqual([409, { error: 'domain_taken' }]);

    // Records gone later: still verified and served, saying since when they are missing.
    dns.zone.delete(txt!.name);
    const missing = (await a.send('POST', `/domains/${mine.id}/check`)).json() as Item;
    expect(missing).toMatchObject({ served: true, verification: { status: 'verified' } });
    expect(missing.verification.records_missing_since).toBe(missing.verification.checked_at);
    expect((await visit(hostname)).statusCode).toBe(302);

    // The operator's list pages on (hostname, id): both claims of the host, each once.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await t.request({ method: 'GET', url: '/api/internal/attribution-domains', admin: true, query: { limit: '1', ...(cursor ? { cursor } : {}) } });
      seen.push(...page.json().data.filter((d: Item) => d.hostname === hostname).map((d: Item) => d.id));
      cursor = page.json().pagination.next_cursor;
    } while (cursor);
    expect(seen.sort()).toEqual([mine.id, squat.id].sort());
  });

  it('lets the operator register a host a brand squats, served at once; the squatter’s check is then 409', async () => {
    const hostname = host('links.real-owner');
    const squat = await claim(b, hostname);
    const operator = await createDomain(t, { hostname, brand_id: fx.brandA });
    expect(operator).toMatchObject({ registered_by: 'operator', served: true });
    await createLink(t, { brand_id: fx.brandA, creator_id: fx.creator, domain_id: operator.id, slug: 'anna', destination_url: 'https://acme.example/real' });
    expect((await visit(hostname)).statusCode).toBe(302);
    expect((await b.send('POST', `/domains/${squat.id}/check`)).json()).toEqual({ error: 'domain_taken' });
    expect(await listed(b, squat.id)).toMatchObject({ taken: true });
  });

  it("makes a brand's own pending claim an operator domain when the operator registers it for that brand (same id, links kept)", async () => {
    const hostname = host('go.upgrade');
    const pending = await claim(a, hostname);
    await createLink(t, { brand_id: fx.brandA, creator_id: fx.creator, domain_id: pending.id, slug: 'anna', destination_url: 'https://acme.example/up' });
    expect((await visit(hostname)).statusCode).toBe(404);
    const trusted = await createDomain(t, { hostname, brand_id: fx.brandA });
    expect(trusted).toMatchObject({ id: pending.id, registered_by: 'operator', served: true, certificate: { status: 'unmanaged' } });
    expect((await visit(hostname)).headers.location).toMatch(/^https:\/\/acme\.example\/up/);
  });
});
