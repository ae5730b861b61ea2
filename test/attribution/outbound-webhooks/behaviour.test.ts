import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryQueue } from '../../../src/attribution/outbound-webhooks/queue';
import { WebhookDeliveryWorker, webhookWorkerOptions } from '../../../workers/webhook-delivery';
import { startTestService, type TestService } from '../../helpers/harness';
import { attributionBrand, type AttributionBrand, postPublic } from '../public/setup';
import { type PortalCalls, signedInPortal, startDns, startReceiver, stopAll, TEST_ENV, until } from './helpers';

/**
 * Delivery that a broken receiver cannot break: retries on the schedule (N waits, N+1 attempts),
 * Retry-After, 410, disabling after long failure and its alert, replay, at most 4 attempts in flight
 * per endpoint, and receivers that hang, redirect or answer 10 MB costing one attempt each.
 */

let t: TestService;
let dns: Awaited<ReturnType<typeof startDns>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let portal: PortalCalls;
let b: AttributionBrand;
const counts = new Map<string, number>();
const flow = { inFlight: 0, max: 0, bigFinished: false, bigClosedEarly: false };

beforeAll(async () => {
  dns = await startDns();
  receiver = await startReceiver((req, res) => {
    const path = req.url ?? '/';
    const n = (counts.get(path) ?? 0) + 1;
    counts.set(path, n);
    if (path === '/down') return void res.writeHead(500).end('down');
    if (path === '/flaky') return void res.writeHead(n <= 2 ? 500 : 200).end();
    if (path === '/busy') return void (n === 1 ? res.writeHead(429, { 'retry-after': '3' }).end() : res.end('ok'));
    if (path === '/gone') return void res.writeHead(410).end();
    if (path === '/hang') return; // never answers
    if (path === '/redirect') return void res.writeHead(302, { location: '/target' }).end();
    if (path === '/big') {
      res.on('finish', () => { flow.bigFinished = true; });
      res.on('close', () => { if (!flow.bigFinished) flow.bigClosedEarly = true; });
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let sent = 0;
      const pump = () => {
        while (sent < 10 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      return pump();
    }
    if (path.startsWith('/slow')) {
      flow.inFlight++;
      flow.max = Math.max(flow.max, flow.inFlight);
      return void setTimeout(() => {
        flow.inFlight--;
        res.end('ok');
      }, 300);
    }
    res.end('ok');
  });
  t = await startTestService({ env: { ...TEST_ENV(dns.server), WEBHOOK_RETRY_SCHEDULE: '1,1', WEBHOOK_TIMEOUT_MS: '1500', WEBHOOK_MAX_ENDPOINTS: '20' } });
  b = await attributionBrand(t);
  portal = await signedInPortal(t, b.brand.id);
});
afterAll(() => stopAll(t, receiver, dns));

let n = 0;
/** A signup with a code: a lead.created event for every endpoint taking it. */
async function lead() {
  const res = await postPublic(t, 'events', { pixel_key: b.brand.pixel_key, event_type: 'signup', code: b.code.label, transaction_id: `lead-${Date.now()}-${++n}` });
  expect(res.statusCode, res.body).toBe(200);
}

async function endpointFor(path: string, extra: Record<string, unknown> = {}) {
  const res = await portal.send('POST', '/webhooks', { url: receiver.url(path), event_types: ['lead.created'], ...extra });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string };
}

const deliveriesOf = async (id: string, query = '') => (await portal.get(`/webhooks/${id}/deliveries${query}`)).json().data as { id: string; event_id: string; status: string }[];
const detail = async (id: string, deliveryId: string) => (await portal.get(`/webhooks/${id}/deliveries/${deliveryId}`)).json();
const settled = (id: string, count: number) => until(() => deliveriesOf(id), (d) => d.length === count && d.every((x) => x.status !== 'pending'), 30_000);

describe('retries and health', () => {
  let down: { id: string };
  let flaky: { id: string };

  it('retries on the schedule (two waits: three attempts), then fails; the endpoint is failing until a success', async () => {
    down = await endpointFor('/down');
    flaky = await endpointFor('/flaky');
    await lead();
    const [failed] = await settled(down.id, 1);
    expect(failed).toMatchObject({ status: 'failed', attempt_count: 3, response_status: 500, error: 'http_status', next_attempt_at: null });
    const log = await detail(down.id, failed!.id);
    expect(log.attempts.map((a: { attempt: number; response_status: number }) => [a.attempt, a.response_status])).toEqual([[1, 500], [2, 500], [3, 500]]);
    // About a second apart (±10%), never sooner.
    expect(Date.parse(log.attempts[1].at) - Date.parse(log.attempts[0].at)).toBeGreaterThanOrEqual(900);
    const [recovered] = await settled(flaky.id, 1);
    expect(recovered).toMatchObject({ status: 'succeeded', attempt_count: 3, response_status: 200, error: null });
    expect((await portal.get(`/webhooks/${flaky.id}`)).json()).toMatchObject({ status: 'active', failing_since: null, last_success_at: expect.any(String) });
    const item = (await portal.get(`/webhooks/${down.id}`)).json();
    expect(item).toMatchObject({ status: 'failing', enabled: true, failing_since: expect.any(String), last_success_at: null });
    const overview = (await portal.get('/overview')).json();
    expect(overview.webhook_alerts).toEqual([{ endpoint_id: down.id, url: receiver.url('/down'), status: 'failing', since: item.failing_since }]);
    expect(overview.clicks).toEqual(expect.any(Number));
  });

  it('replays a delivery: the same body and id, its schedule again, attempts accumulating; 409 while pending', async () => {
    const [failed] = await deliveriesOf(down.id);
    const res = await portal.send('POST', `/webhooks/${down.id}/deliveries/${failed!.id}/replay`);
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ id: failed!.id, event_id: failed!.event_id, status: 'pending' });
    const again = await portal.send('POST', `/webhooks/${down.id}/deliveries/${failed!.id}/replay`);
    expect([again.statusCode, again.json()]).toEqual([409, { error: 'delivery_pending' }]);
    const [done] = await settled(down.id, 1);
    expect(done).toMatchObject({ status: 'failed', attempt_count: 6 });
    const log = await detail(down.id, failed!.id);
    expect(log.attempts.map((a: { attempt: number }) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await portal.send('POST', `/webhooks/${down.id}/deliveries/nope/replay`)).statusCode).toBe(404);
  });

  it('disables an endpoint failing longer than WEBHOOK_DISABLE_AFTER_HOURS, ending its pending deliveries; enabling resends nothing', async () => {
    // The delivery exists (pending its retry) before the endpoint's failure is backdated, so the
    // workers' periodic disabling cannot run first and leave the fact with no delivery at all.
    await lead();
    const [pending] = await until(() => deliveriesOf(down.id), (d) => d.length === 2);
    await sql`UPDATE webhook_endpoints SET failing_since = now() - interval '121 hours' WHERE id = ${down.id}`.execute(t.services.db);
    const item = await until(async () => (await portal.get(`/webhooks/${down.id}`)).json(), (e) => e.status === 'disabled');
    expect(item).toMatchObject({ enabled: false, disabled_reason: 'failing' });
    const deliveries = await until(() => deliveriesOf(down.id), (d) => d[0]?.status !== 'pending');
    expect(deliveries[0]).toMatchObject({ id: pending!.id, status: 'failed', error: 'endpoint_disabled' });
    const alerts = (await portal.get('/overview')).json().webhook_alerts;
    expect(alerts).toEqual([{ endpoint_id: down.id, url: receiver.url('/down'), status: 'disabled', since: item.disabled_at }]);
    // Facts make no deliveries while it is disabled.
    await lead();
    await settled(flaky.id, 3);
    expect(await deliveriesOf(down.id)).toHaveLength(2);
    const enabled = await portal.send('PATCH', `/webhooks/${down.id}`, { enabled: true });
    expect(enabled.json()).toMatchObject({ status: 'active', failing_since: null });
    expect(await deliveriesOf(down.id, '?status=pending')).toEqual([]);
    await portal.send('DELETE', `/webhooks/${down.id}`);
  });

  it('waits what Retry-After asks on a 429', async () => {
    const busy = await endpointFor('/busy');
    await lead();
    const [done] = await settled(busy.id, 1);
    expect(done).toMatchObject({ status: 'succeeded', attempt_count: 2 });
    const log = await detail(busy.id, done!.id);
    expect(log.attempts[0].response_status).toBe(429);
    expect(Date.parse(log.attempts[1].at) - Date.parse(log.attempts[0].at)).toBeGreaterThanOrEqual(3000);
    await portal.send('DELETE', `/webhooks/${busy.id}`);
  });

  it('disables an endpoint that answers 410 (gone)', async () => {
    const gone = await endpointFor('/gone');
    await lead();
    const [done] = await settled(gone.id, 1);
    expect(done).toMatchObject({ status: 'failed', attempt_count: 1, response_status: 410, error: 'http_status' });
    expect((await portal.get(`/webhooks/${gone.id}`)).json()).toMatchObject({ status: 'disabled', disabled_reason: 'gone' });
    await portal.send('DELETE', `/webhooks/${gone.id}`);
  });
});

describe('receivers that misbehave cost one attempt each', () => {
  let ep: { id: string };
  const test = async () => {
    const res = await portal.send('POST', `/webhooks/${ep.id}/test`);
    expect(res.statusCode).toBe(202);
    return until(() => detail(ep.id, res.json().id), (d) => d.status !== 'pending');
  };

  it('a receiver that never answers: timeout', async () => {
    ep = await endpointFor('/hang');
    expect(await test()).toMatchObject({ status: 'failed', attempt_count: 1, error: 'timeout', response_status: null });
    await portal.send('DELETE', `/webhooks/${ep.id}`);
  });

  it('a redirect is not followed', async () => {
    ep = await endpointFor('/redirect');
    expect(await test()).toMatchObject({ status: 'failed', error: 'redirect', response_status: 302 });
    expect(counts.get('/target')).toBeUndefined();
    await portal.send('DELETE', `/webhooks/${ep.id}`);
  });

  it('a 10 MB answer: read to a small cap, 1 KiB kept, the connection closed', async () => {
    ep = await endpointFor('/big');
    const d = await test();
    expect(d).toMatchObject({ status: 'succeeded', response_status: 200 });
    expect(d.attempts[0].response_excerpt).toBe('x'.repeat(1024));
    await until(async () => flow.bigClosedEarly || flow.bigFinished, (v) => v);
    expect([flow.bigClosedEarly, flow.bigFinished]).toEqual([true, false]);
    await portal.send('DELETE', `/webhooks/${ep.id}`);
  });

  it('keeps at most 4 attempts in flight per endpoint', async () => {
    const slow = await endpointFor('/slow');
    for (let i = 0; i < 12; i++) await lead();
    await settled(slow.id, 12);
    expect(flow.max).toBeGreaterThan(1);
    expect(flow.max).toBeLessThanOrEqual(4);
  });

  it('keeps at most 4 attempts in flight per endpoint across worker processes', async () => {
    const slow = await endpointFor('/slow-shared');
    // A second delivery worker, as another process would run: its own turns, the same queue.
    const queue = new DeliveryQueue(t.services.redis, t.config.queuePrefix);
    const other = new WebhookDeliveryWorker(t.services.db, t.services.redis.duplicate({ maxRetriesPerRequest: null }), t.config.queuePrefix, queue, { ...webhookWorkerOptions(t.config), sweep: false }, t.services.log);
    try {
      // Jobs of their own (as retries are), so both workers take some.
      const ids = Array.from({ length: 24 }, (_, i) => `spread-${Date.now()}-${i}`);
      await sql`INSERT INTO webhook_deliveries (id, endpoint_id, brand_id, event_id, event_type, payload, fact_recorded_at, next_attempt_at)
        SELECT id, ${slow.id}, ${b.brand.id}, 'evt_' || id, 'lead.created', '{}', now(), now() FROM unnest(${ids}::text[]) AS id`.execute(t.services.db);
      flow.max = 0;
      await queue.add(ids.map((id) => ({ id, endpointId: slow.id })));
      await settled(slow.id, 24);
      expect(flow.max).toBeGreaterThan(1);
      expect(flow.max).toBeLessThanOrEqual(4);
    } finally {
      await other.close();
      await queue.close();
    }
  });
});

describe('jobs queued before jobs carried batches', () => {
  it('delivers a job that names only its delivery', async () => {
    const ep = await endpointFor('/legacy');
    const id = `legacy-${Date.now()}`;
    await sql`INSERT INTO webhook_deliveries (id, endpoint_id, brand_id, event_id, event_type, payload, fact_recorded_at, next_attempt_at)
      VALUES (${id}, ${ep.id}, ${b.brand.id}, ${`evt_${id}`}, 'lead.created', '{}', now(), now())`.execute(t.services.db);
    const queue = new DeliveryQueue(t.services.redis, t.config.queuePrefix);
    try {
      await queue.queue.add('deliver', { deliveryId: id }, { jobId: id });
      const [delivery] = await settled(ep.id, 1);
      expect(delivery).toMatchObject({ id, status: 'succeeded' });
      expect(counts.get('/legacy')).toBe(1);
    } finally {
      await queue.close();
    }
  });
});

describe('retention', () => {
  it('purges deliveries older than WEBHOOK_RETENTION_DAYS, never pending ones', async () => {
    const ep = await endpointFor('/old');
    await sql`INSERT INTO webhook_deliveries (id, endpoint_id, brand_id, event_id, event_type, payload, status, fact_recorded_at, created_at, next_attempt_at)
      VALUES ('old-done', ${ep.id}, ${b.brand.id}, 'evt_old1', 'lead.created', '{}', 'succeeded', now(), now() - interval '31 days', NULL),
             ('old-pending', ${ep.id}, ${b.brand.id}, 'evt_old2', 'lead.created', '{}', 'pending', now(), now() - interval '31 days', now() + interval '1 hour'),
             ('recent', ${ep.id}, ${b.brand.id}, 'evt_old3', 'lead.created', '{}', 'failed', now(), now() - interval '29 days', NULL)`.execute(t.services.db);
    const queue = new DeliveryQueue(t.services.redis, t.config.queuePrefix);
    const worker = new WebhookDeliveryWorker(t.services.db, t.services.redis.duplicate({ maxRetriesPerRequest: null }), t.config.queuePrefix, queue, { ...webhookWorkerOptions(t.config), sweep: false }, t.services.log);
    await worker.sweep();
    await worker.close();
    await queue.close();
    const { rows } = await sql<{ id: string }>`SELECT id FROM webhook_deliveries WHERE endpoint_id = ${ep.id} ORDER BY id`.execute(t.services.db);
    expect(rows.map((r) => r.id)).toEqual(['old-pending', 'recent']);
  });
});
