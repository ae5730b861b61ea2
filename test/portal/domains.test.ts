import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDomain, createLink } from '../helpers/attribution-fixtures';
import { createBrand, createCreator } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { createPortalUser, type Portal, portal, portalLogin } from './helpers';

let t: TestService;
let a: Portal;
let b: Portal;
let cookieA: string;
const fx = {} as { brandA: string; brandB: string; creator: string; shared: { id: string; hostname: string }; ownB: { id: string; hostname: string } };
const host = (name: string) => `${name}-${randomBytes(3).toString('hex')}.test`;

beforeAll(async () => {
  t = await startTestService({ workers: false });
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
afterAll(async () => destroyTestService(t));

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
      verification: { status: 'pending', checked_at: null },
      certificate: { status: 'pending' },
    });
    expect(res.json().dns.length).toBeGreaterThan(0);
    expect((await a.send('POST', '/domains', { hostname })).json()).toEqual({ error: 'domain_taken' });
    expect((await a.send('POST', '/domains', { hostname: 'not a host' })).statusCode).toBe(422);
  });

  it("refuses the service's own host (PUBLIC_BASE_URL's), which would turn every API request into a link visit", async () => {
    for (const hostname of ['svc.test', 'WWW.svc.test']) {
      const res = await a.send('POST', '/domains', { hostname });
      expect(res.statusCode, hostname).toBe(409);
      expect(res.json()).toEqual({ error: 'domain_taken' });
    }
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
