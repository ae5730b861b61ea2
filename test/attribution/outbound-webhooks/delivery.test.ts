import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attempt, USER_AGENT } from '../../../src/attribution/outbound-webhooks/attempt';
import { createPortalUser, portalLogin } from '../../portal/helpers';
import { createBrand } from '../../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { type PortalCalls, portalCalls, type Received, startDns, startReceiver, TEST_ENV, until } from './helpers';

/**
 * One delivery attempt end to end: signed as Standard Webhooks 1.0 (checked with the reference
 * implementation, `standardwebhooks`), sent to the address its check resolved, logged.
 */

let t: TestService;
let dns: Awaited<ReturnType<typeof startDns>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let portal: PortalCalls;
let endpoint: { id: string; secret: string };

const headersOf = (r: Received) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});

beforeAll(async () => {
  dns = await startDns();
  receiver = await startReceiver();
  t = await startTestService({ env: TEST_ENV(dns.server) });
  const brand = (await createBrand(t, { name: 'Acme' })).id;
  await createPortalUser(t, brand, 'a@acme.test');
  portal = portalCalls(t, await portalLogin(t, 'a@acme.test'));
  const res = await portal.send('POST', '/webhooks', { url: receiver.url('/hook') });
  expect(res.statusCode, res.body).toBe(201);
  endpoint = res.json();
});
afterAll(async () => {
  await destroyTestService(t);
  await receiver.close();
  await dns.close();
});

/** Sends a test event and waits for its attempt; answers what the receiver got and the delivery's detail. */
async function sendTest(type?: string) {
  const before = receiver.received.length;
  const res = await portal.send('POST', `/webhooks/${endpoint.id}/test`, type ? { type } : {});
  expect(res.statusCode, res.body).toBe(202);
  const item = res.json();
  const detail = await until(
    async () => (await portal.get(`/webhooks/${endpoint.id}/deliveries/${item.id}`)).json(),
    (d) => d.status !== 'pending',
  );
  return { item, detail, got: receiver.received.slice(before) };
}

describe('a delivery attempt', () => {
  it('sends a signed test event that the Standard Webhooks reference implementation verifies', async () => {
    const { item, detail, got } = await sendTest();
    expect(item).toMatchObject({ event_type: 'sale.created', status: 'pending', test: true, attempt_count: 0 });
    expect(got).toHaveLength(1);
    const r = got[0]!;
    const payload = new Webhook(endpoint.secret).verify(r.body, headersOf(r)) as Record<string, unknown>;
    expect(payload).toMatchObject({ id: item.event_id, type: 'sale.created', test: true, data: { event_type: 'purchase' } });
    expect(r.headers['webhook-id']).toBe(item.event_id);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['user-agent']).toBe(USER_AGENT);
    expect(USER_AGENT).toMatch(/^svc-webhooks\/\d+\.\d+\.\d+/);
    expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    // The body is minified, and the log keeps it as a JSON object.
    expect(r.body).toBe(JSON.stringify(JSON.parse(r.body)));
    expect(detail).toMatchObject({ status: 'succeeded', attempt_count: 1, response_status: 200, error: null, payload });
    expect(detail.attempts).toEqual([{ attempt: 1, at: expect.any(String), response_status: 200, duration_ms: expect.any(Number), error: null, response_excerpt: 'ok' }]);
  });

  it('signs with both secrets during a rotation, the new one first, and with the new one only after a rotation without grace', async () => {
    const rotated = (await portal.send('POST', `/webhooks/${endpoint.id}/rotate-secret`, { grace_seconds: 3600 })).json();
    const { got } = await sendTest('install.attributed');
    const r = got[0]!;
    const signatures = String(r.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    expect(new Webhook(rotated.secret).verify(r.body, headersOf(r))).toMatchObject({ type: 'install.attributed' });
    expect(new Webhook(endpoint.secret).verify(r.body, headersOf(r))).toMatchObject({ type: 'install.attributed' });
    const first = { ...headersOf(r), 'webhook-signature': signatures[0]! };
    expect(() => new Webhook(rotated.secret).verify(r.body, first)).not.toThrow();
    expect(() => new Webhook(endpoint.secret).verify(r.body, first)).toThrow();

    const again = (await portal.send('POST', `/webhooks/${endpoint.id}/rotate-secret`, { grace_seconds: 0 })).json();
    const { got: after } = await sendTest('lead.created');
    const s = after[0]!;
    expect(String(s.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(new Webhook(again.secret).verify(s.body, headersOf(s))).toMatchObject({ type: 'lead.created' });
    expect(() => new Webhook(rotated.secret).verify(s.body, headersOf(s))).toThrow();
    endpoint.secret = again.secret;
  });

  it('logs a failed test attempt without changing the endpoint health, and keeps 1 KiB of the answer', async () => {
    receiver.state.respond = (_req, res) => res.writeHead(500).end('é'.repeat(2000));
    const { detail } = await sendTest('refund.created');
    receiver.state.respond = undefined;
    expect(detail).toMatchObject({ status: 'failed', attempt_count: 1, response_status: 500, error: 'http_status' });
    const excerpt: string = detail.attempts[0].response_excerpt;
    expect(Buffer.byteLength(excerpt)).toBeLessThanOrEqual(1024);
    expect(excerpt.length).toBe(512);
    const item = (await portal.get(`/webhooks/${endpoint.id}`)).json();
    expect(item).toMatchObject({ status: 'active', failing_since: null });
  });

  it('lists deliveries newest first, filtered and paged', async () => {
    const all = (await portal.get(`/webhooks/${endpoint.id}/deliveries`)).json();
    expect(all.data.map((d: { event_type: string }) => d.event_type)).toEqual(['refund.created', 'lead.created', 'install.attributed', 'sale.created']);
    const failed = (await portal.get(`/webhooks/${endpoint.id}/deliveries?status=failed`)).json();
    expect(failed.data).toHaveLength(1);
    const page1 = (await portal.get(`/webhooks/${endpoint.id}/deliveries?limit=3`)).json();
    expect(page1.pagination.has_more).toBe(true);
    const page2 = (await portal.get(`/webhooks/${endpoint.id}/deliveries?limit=3&cursor=${page1.pagination.next_cursor}`)).json();
    expect([...page1.data, ...page2.data].map((d: { id: string }) => d.id)).toEqual(all.data.map((d: { id: string }) => d.id));
    expect((await portal.get(`/webhooks/${endpoint.id}/deliveries?cursor=zzz`)).statusCode).toBe(400);
  });

  it('pages through deliveries sharing one created_at to the microsecond (one fan-out) without skipping any', async () => {
    await sql`UPDATE webhook_deliveries SET created_at = date_trunc('milliseconds', now()) - interval '1 minute' + interval '901 microseconds' WHERE endpoint_id = ${endpoint.id}`.execute(t.services.db);
    const all = (await portal.get(`/webhooks/${endpoint.id}/deliveries`)).json().data.map((d: { id: string }) => d.id);
    expect(all.length).toBeGreaterThan(2);
    const seen: string[] = [];
    let cursor = '';
    for (let page = 0; page < all.length; page++) {
      const res = (await portal.get(`/webhooks/${endpoint.id}/deliveries?limit=2${cursor ? `&cursor=${cursor}` : ''}`)).json();
      seen.push(...res.data.map((d: { id: string }) => d.id));
      if (!res.pagination.has_more) break;
      cursor = res.pagination.next_cursor;
    }
    expect(seen).toEqual(all);
  });
});

describe('the connection goes to the address checked', () => {
  const rules = () => ({ requireHttps: false, allowedNetworks: ['127.0.0.0/8'], publicBaseUrl: 'http://svc.test', dnsServers: [dns.server] });

  it('connects to the checked address even when the name answers otherwise right after', async () => {
    dns.zone.set('pin.hooks.test', { A: ['127.0.0.1'] });
    // Once the check has its answer, the name moves to an address that is refused and unreachable.
    dns.hooks.answered = (name) => {
      if (name === 'pin.hooks.test') dns.zone.set(name, { A: ['10.255.255.1'] });
    };
    const before = receiver.received.length;
    const r = await attempt({ url: `http://pin.hooks.test:${receiver.port}/pinned`, body: '{}', headers: {}, timeoutMs: 5000, rules: rules() });
    dns.hooks.answered = undefined;
    expect(r).toMatchObject({ status: 200, error: null });
    expect(receiver.received.slice(before).map((x) => x.path)).toEqual(['/pinned']);
    // The next attempt checks again and refuses the new answer.
    const next = await attempt({ url: `http://pin.hooks.test:${receiver.port}/pinned`, body: '{}', headers: {}, timeoutMs: 5000, rules: rules() });
    expect(next).toMatchObject({ status: null, error: 'blocked_address' });
    const gone = await attempt({ url: `http://gone.hooks.test:${receiver.port}/`, body: '{}', headers: {}, timeoutMs: 5000, rules: rules() });
    expect(gone).toMatchObject({ status: null, error: 'dns' });
  });

  it('classifies connection failures', async () => {
    const closed = await startReceiver();
    const port = closed.port;
    await closed.close();
    const r = await attempt({ url: `http://127.0.0.1:${port}/`, body: '{}', headers: {}, timeoutMs: 5000, rules: rules() });
    expect(r).toMatchObject({ status: null, error: 'connection' });
    const tls = await attempt({ url: `https://127.0.0.1:${receiver.port}/`, body: '{}', headers: {}, timeoutMs: 5000, rules: rules() });
    expect(tls.error).toBe('tls');
  });
});

describe('answers Postgres cannot store as they are', () => {
  it('keeps an excerpt with NUL bytes, within 1 KiB', async () => {
    const nul = await startReceiver((_req, res) => res.end(Buffer.alloc(2000, 0)));
    try {
      const r = await attempt({ url: nul.url('/nul'), body: '{}', headers: {}, timeoutMs: 5000, rules: { requireHttps: false, allowedNetworks: ['127.0.0.0/8'], publicBaseUrl: 'http://svc.test', dnsServers: undefined } });
      expect(r.status).toBe(200);
      expect(r.excerpt).not.toContain('\u0000');
      expect(Buffer.byteLength(r.excerpt!)).toBeLessThanOrEqual(1024);
    } finally {
      await nul.close();
    }
  });
});
