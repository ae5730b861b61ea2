import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkUrlShape } from '../../src/attribution/outbound-webhooks/addresses';
import { type PortalCalls, portalCalls, startDns, startReceiver, TEST_ENV } from '../attribution/outbound-webhooks/helpers';
import { createBrand } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { createPortalUser, portalLogin } from './helpers';

let t: TestService;
let dns: Awaited<ReturnType<typeof startDns>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let a: PortalCalls;
let b: PortalCalls;
const fx = {} as { brandA: string; brandB: string };

beforeAll(async () => {
  dns = await startDns();
  receiver = await startReceiver();
  t = await startTestService({ workers: false, env: { ...TEST_ENV(dns.server), WEBHOOK_MAX_ENDPOINTS: '4' } });
  fx.brandA = (await createBrand(t, { name: 'Acme' })).id;
  fx.brandB = (await createBrand(t, { name: 'Bravo' })).id;
  await createPortalUser(t, fx.brandA, 'a@acme.test');
  await createPortalUser(t, fx.brandB, 'b@bravo.test');
  a = portalCalls(t, await portalLogin(t, 'a@acme.test'));
  b = portalCalls(t, await portalLogin(t, 'b@bravo.test'));
  dns.zone.set('private.hooks.test', { A: ['10.1.2.3'] });
  dns.zone.set('private6.hooks.test', { AAAA: ['fd00::1'] });
  dns.zone.set('mapped.hooks.test', { AAAA: ['::ffff:192.168.1.1'] });
  dns.zone.set('mixed.hooks.test', { A: ['93.184.216.34', '10.0.0.5'] });
  dns.zone.set('public.hooks.test', { A: ['93.184.216.34'] });
  dns.zone.set('loop.hooks.test', { A: ['127.0.0.1'] });
});
afterAll(async () => {
  await destroyTestService(t);
  await receiver.close();
  await dns.close();
});

const ENDPOINT_KEYS = [
  'attributed_only', 'created_at', 'description', 'disabled_at', 'disabled_reason', 'enabled', 'event_types', 'failing_since', 'id',
  'include_sandbox', 'last_attempt_at', 'last_success_at', 'previous_secret_expires_at', 'secret_hint', 'status', 'url',
];

describe('portal webhook endpoints', () => {
  let created: Record<string, unknown> & { id: string; secret: string };

  it('creates an endpoint with its defaults and answers its secret once', async () => {
    const res = await a.send('POST', '/webhooks', { url: receiver.url('/hook'), description: 'CRM' });
    expect(res.statusCode, res.body).toBe(201);
    created = res.json();
    expect(Object.keys(created).sort()).toEqual([...ENDPOINT_KEYS, 'secret'].sort());
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
    expect(created).toMatchObject({
      url: receiver.url('/hook'),
      description: 'CRM',
      event_types: ['install.attributed', 'sale.created', 'refund.created', 'lead.created'],
      attributed_only: true,
      include_sandbox: false,
      enabled: true,
      status: 'active',
      failing_since: null,
      disabled_at: null,
      disabled_reason: null,
      secret_hint: created.secret.slice(0, 10),
      previous_secret_expires_at: null,
      last_attempt_at: null,
      last_success_at: null,
    });
    const list = await a.get('/webhooks');
    expect(list.statusCode).toBe(200);
    expect(list.json().data).toEqual([Object.fromEntries(Object.entries(created).filter(([k]) => k !== 'secret'))]);
    expect(list.json().event_types.map((e: { type: string }) => e.type)).toEqual(['install.attributed', 'sale.created', 'refund.created', 'lead.created']);
    expect(list.body).not.toContain(created.secret);
    const one = await a.get(`/webhooks/${created.id}`);
    expect(one.json()).toEqual(list.json().data[0]);
  });

  it('refuses a URL the brand already has, compared after normalisation: 409 webhook_url_taken', async () => {
    const res = await a.send('POST', '/webhooks', { url: receiver.url('/hook').replace('http://', 'HTTP://') });
    expect([res.statusCode, res.json()]).toEqual([409, { error: 'webhook_url_taken' }]);
    // Another brand may register the same URL.
    const other = await b.send('POST', '/webhooks', { url: receiver.url('/hook') });
    expect(other.statusCode).toBe(201);
  });

  it("answers 404 not_found for another brand's endpoint and unknown ids", async () => {
    for (const path of [`/webhooks/${created.id}`, '/webhooks/nope', `/webhooks/${created.id}/deliveries`]) {
      const res = await b.get(path);
      expect([res.statusCode, res.json()]).toEqual([404, { error: 'not_found' }]);
    }
    const del = await b.send('DELETE', `/webhooks/${created.id}`);
    expect(del.statusCode).toBe(404);
  });

  it('refuses invalid bodies with 422 invalid_request', async () => {
    for (const body of [{}, { url: receiver.url('/x'), description: 'x'.repeat(201) }, { url: receiver.url('/x'), event_types: ['click.created'] }, { url: receiver.url('/x'), event_types: [] }]) {
      const res = await a.send('POST', '/webhooks', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(res.json().error).toBe('invalid_request');
    }
    const rotate = await a.send('POST', `/webhooks/${created.id}/rotate-secret`, { grace_seconds: 604_801 });
    expect([rotate.statusCode, rotate.json().error]).toEqual([422, 'invalid_request']);
  });

  it('changes filters, disables and enables an endpoint (enabling clears its failure state)', async () => {
    let res = await a.send('PATCH', `/webhooks/${created.id}`, { event_types: ['sale.created'], include_sandbox: true, attributed_only: false });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ event_types: ['sale.created'], include_sandbox: true, attributed_only: false });
    res = await a.send('PATCH', `/webhooks/${created.id}`, { enabled: false });
    expect(res.json()).toMatchObject({ enabled: false, status: 'disabled', disabled_reason: 'user' });
    expect(res.json().disabled_at).not.toBeNull();
    res = await a.send('PATCH', `/webhooks/${created.id}`, { enabled: true });
    expect(res.json()).toMatchObject({ enabled: true, status: 'active', disabled_reason: null, disabled_at: null, failing_since: null });
  });

  it("lets the operator disable an endpoint, which its brand cannot enable again (409 endpoint_disabled)", async () => {
    const list = await t.request({ method: 'GET', url: `/api/internal/webhook-endpoints?brand_id=${fx.brandA}`, admin: true });
    expect(list.statusCode).toBe(200);
    expect(list.json().data.map((e: { id: string; brand_id: string }) => [e.id, e.brand_id])).toEqual([[created.id, fx.brandA]]);
    const off = await t.request({ method: 'PATCH', url: `/api/internal/webhook-endpoints/${created.id}`, admin: true, payload: { enabled: false } });
    expect(off.json()).toMatchObject({ status: 'disabled', disabled_reason: 'operator', enabled: false, brand_id: fx.brandA });
    const res = await a.send('PATCH', `/webhooks/${created.id}`, { enabled: true });
    expect([res.statusCode, res.json()]).toEqual([409, { error: 'endpoint_disabled' }]);
    const on = await t.request({ method: 'PATCH', url: `/api/internal/webhook-endpoints/${created.id}`, admin: true, payload: { enabled: true } });
    expect(on.json()).toMatchObject({ status: 'active', disabled_reason: null });
    const unknown = await t.request({ method: 'PATCH', url: '/api/internal/webhook-endpoints/nope', admin: true, payload: { enabled: true } });
    expect(unknown.statusCode).toBe(404);
  });

  it('rotates the secret with a grace window; grace 0 ends the old one at once', async () => {
    const res = await a.send('POST', `/webhooks/${created.id}/rotate-secret`, { grace_seconds: 3600 });
    expect(res.statusCode, res.body).toBe(200);
    const rotated = res.json();
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    expect(rotated.secret_hint).toBe(rotated.secret.slice(0, 10));
    const expires = Date.parse(rotated.previous_secret_expires_at);
    expect(Math.abs(expires - (Date.now() + 3600_000))).toBeLessThan(60_000);
    const defaulted = (await a.send('POST', `/webhooks/${created.id}/rotate-secret`)).json();
    expect(Math.abs(Date.parse(defaulted.previous_secret_expires_at) - (Date.now() + 86_400_000))).toBeLessThan(60_000);
    const none = (await a.send('POST', `/webhooks/${created.id}/rotate-secret`, { grace_seconds: 0 })).json();
    expect(none.previous_secret_expires_at).toBeNull();
  });

  it('counts disabled endpoints in the limit: 409 endpoint_limit_reached', async () => {
    const urls = ['/l1', '/l2', '/l3'].map((p) => receiver.url(p));
    for (const url of urls) expect((await a.send('POST', '/webhooks', { url })).statusCode).toBe(201);
    const all = (await a.get('/webhooks')).json().data as { id: string }[];
    await a.send('PATCH', `/webhooks/${all[1]!.id}`, { enabled: false });
    const res = await a.send('POST', '/webhooks', { url: receiver.url('/l4') });
    expect([res.statusCode, res.json()]).toEqual([409, { error: 'endpoint_limit_reached' }]);
    expect((await a.send('DELETE', `/webhooks/${all[1]!.id}`)).statusCode).toBe(204);
    expect((await a.get(`/webhooks/${all[1]!.id}`)).statusCode).toBe(404);
    expect((await a.send('POST', '/webhooks', { url: receiver.url('/l4') })).statusCode).toBe(201);
  });
});

describe('webhook URL rules (SSRF)', () => {
  const refused = async (url: string) => {
    const res = await b.send('POST', '/webhooks', { url });
    return [res.statusCode, res.json()];
  };

  it('names the first rule a URL breaks, in the documented order', async () => {
    const cases: [string, string][] = [
      ['ftp://files.example.com/hook', 'scheme'],
      ['not a url', 'scheme'],
      ['javascript:alert(1)', 'scheme'],
      ['ftp://user@localhost/#x', 'scheme'],
      [`https://hooks.example.com/${'a'.repeat(2048)}`, 'too_long'],
      ['https://user:pw@localhost/#x', 'userinfo'],
      ['https://user@public.hooks.test/', 'userinfo'],
      ['https://public.hooks.test/hook#frag', 'fragment'],
      ['https://public.hooks.test/hook#', 'fragment'],
      ['http://svc.test/hook', 'service_origin'],
      ['http://SVC.test:80/other', 'service_origin'],
      ['https://localhost/hook', 'localhost'],
      ['https://api.localhost./hook', 'localhost'],
      ['https://intranet/hook', 'single_label'],
      ['https://10.0.0.1/hook', 'blocked_address'],
      ['https://169.254.169.254/latest', 'blocked_address'],
      ['https://100.64.0.1/', 'blocked_address'],
      ['https://192.0.2.10/', 'blocked_address'],
      ['https://224.0.0.1/', 'blocked_address'],
      ['https://[::1]/', 'blocked_address'],
      ['https://[fe80::1]/', 'blocked_address'],
      ['https://[::ffff:10.0.0.1]/', 'blocked_address'],
      ['https://[2001:db8::1]/', 'blocked_address'],
      ['https://private.hooks.test/hook', 'blocked_address'],
      ['https://private6.hooks.test/hook', 'blocked_address'],
      ['https://mapped.hooks.test/hook', 'blocked_address'],
      ['https://mixed.hooks.test/hook', 'blocked_address'],
      ['https://nowhere.hooks.test/hook', 'unresolvable'],
    ];
    for (const [url, reason] of cases) expect(await refused(url), url).toEqual([422, { error: 'invalid_url', reason }]);
  });

  it('accepts a public name, and loopback only through WEBHOOK_ALLOWED_NETWORKS (never the service origin)', async () => {
    expect((await b.send('POST', '/webhooks', { url: 'https://public.hooks.test/hook' })).statusCode).toBe(201);
    expect((await b.send('POST', '/webhooks', { url: 'http://loop.hooks.test:9/hook' })).statusCode).toBe(201);
    // ::ffff:127.0.0.1 is 127.0.0.1, which the test's WEBHOOK_ALLOWED_NETWORKS lets through.
    expect((await b.send('POST', '/webhooks', { url: 'http://[::ffff:127.0.0.1]:9/hook' })).statusCode).toBe(201);
  });

  it('checks an update as a creation', async () => {
    const id = (await b.get('/webhooks')).json().data[0].id;
    const res = await b.send('PATCH', `/webhooks/${id}`, { url: 'https://private.hooks.test/x' });
    expect([res.statusCode, res.json()]).toEqual([422, { error: 'invalid_url', reason: 'blocked_address' }]);
  });

  it('requires https by default', () => {
    const rules = { requireHttps: true, publicBaseUrl: 'https://svc.example.com' };
    expect(() => checkUrlShape('http://hooks.example.com/', rules)).toThrow(expect.objectContaining({ reason: 'scheme' }));
    expect(checkUrlShape('https://hooks.example.com/x', rules).href).toBe('https://hooks.example.com/x');
  });
});
