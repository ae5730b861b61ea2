import { sql } from 'kysely';
import { Redis } from 'ioredis';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookWorkerOptions } from '../../../workers/webhook-delivery';
import { installFact } from '../../../src/attribution/installs/fact';
import { ledgerFact } from '../../../src/attribution/ledger/fact';
import { createLedger } from '../../../src/attribution/ledger/record';
import { deliveriesOf } from '../../../src/attribution/outbound-webhooks/queue';
import { createWebhookServices } from '../../../src/attribution/outbound-webhooks/service';
import { deleteKeysByPrefix } from '../../../src/queues/redis';
import { startTestService, type TestService } from '../../helpers/harness';
import { attributionBrand, type AttributionBrand, postPublic } from '../../attribution/public/setup';
import { type PortalCalls, signedInPortal, startDns, startReceiver, stopAll, TEST_ENV, until } from './helpers';

/**
 * Facts become webhook events exactly once per endpoint: from the batch worker's write, from the
 * outbox sweeper's confirmation after a crash between the write and the fan-out, through replayed
 * batches and a Redis that loses the queued deliveries.
 */

let t: TestService;
let dns: Awaited<ReturnType<typeof startDns>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let portal: PortalCalls;
let b: AttributionBrand;

beforeAll(async () => {
  dns = await startDns();
  receiver = await startReceiver();
  t = await startTestService({ workers: false, env: TEST_ENV(dns.server) });
  b = await attributionBrand(t);
  portal = await signedInPortal(t, b.brand.id);
});
afterAll(() => stopAll(t, receiver, dns));

/** The workers with quick sweeps, as a restarted process would run them. */
function startQuickWorkers() {
  t.startWorkers({
    sweeper: { intervalMs: 200, graceMs: 0, resendAfterMs: 60_000 },
    webhooks: { ...webhookWorkerOptions(t.config), sweep: { intervalMs: 200, overdueMs: 0 } },
  });
}

async function createEndpoint(body: Record<string, unknown>) {
  const res = await portal.send('POST', '/webhooks', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; secret: string };
}

/** A delivered body as the tests read it. */
type Event = { id: string; data: Record<string, unknown> & { id: string; recorded_at: string } } & Record<string, unknown>;

type Delivery = { endpoint_id: string; event_id: string; event_type: string; status: string; payload: string };
const deliveries = async () =>
  (await sql<Delivery>`SELECT endpoint_id, event_id, event_type, status, payload FROM webhook_deliveries WHERE NOT test ORDER BY created_at`.execute(t.services.db)).rows;

/** Every delivery of every endpoint succeeded, and each (endpoint, event) has exactly one. */
async function allDelivered(expected: number) {
  const rows = await until(deliveries, (rows) => rows.length >= expected && rows.every((r) => r.status === 'succeeded'), 30_000);
  expect(rows).toHaveLength(expected);
  expect(new Set(rows.map((r) => `${r.endpoint_id}|${r.event_id}`)).size).toBe(rows.length);
  return rows;
}

const pixel = () => ({ pixel_key: b.brand.pixel_key });
let n = 0;
const tx = () => `tx-${Date.now()}-${++n}`;

describe('events from facts', () => {
  let all: { id: string; secret: string };
  let sales: { id: string; secret: string };
  const ids: Record<string, string> = {};

  it('sends each fact its event, once, to each endpoint whose filters take it', async () => {
    // A fact recorded before the endpoints exist makes no event for them.
    expect((await postPublic(t, 'events', { ...pixel(), event_type: 'purchase', code: b.code.label, transaction_id: tx(), amount: 5 })).statusCode).toBe(200);
    all = await createEndpoint({ url: receiver.url('/all') });
    sales = await createEndpoint({ url: receiver.url('/sales'), event_types: ['sale.created'], attributed_only: false, include_sandbox: true });
    startQuickWorkers();

    const install = await postPublic(t, 'installs', { ...pixel(), install_id: 'dev-1', platform: 'ios', code: b.code.label, app_version: '2.1' });
    expect(install.statusCode, install.body).toBe(201);
    expect((await postPublic(t, 'installs', { ...pixel(), install_id: 'dev-2', platform: 'android' })).statusCode).toBe(201); // unattributed: no event
    expect((await postPublic(t, 'installs', { ...pixel(), install_id: 'dev-1', platform: 'ios' })).statusCode).toBe(200); // duplicate: no event
    const sale = tx();
    for (const body of [
      { event_type: 'purchase', code: b.code.label, transaction_id: sale, amount: 49.99, currency: 'EUR', external_user_id: 'u1' },
      { event_type: 'renewal', code: b.code.label, transaction_id: tx(), amount: 9.99 },
      { event_type: 'refund', transaction_id: sale, amount: 10 },
      { event_type: 'signup', code: b.code.label, transaction_id: tx() },
      { event_type: 'custom', code: b.code.label, transaction_id: tx() },
      { event_type: 'install', code: b.code.label, transaction_id: tx() },
      { event_type: 'purchase', transaction_id: tx(), amount: 1 }, // unattributed
    ]) {
      const res = await postPublic(t, 'events', { ...pixel(), ...body });
      expect(res.statusCode, res.body).toBe(200);
    }
    // A provider's sandbox purchase: only the endpoint that includes sandbox rows takes it.
    await createLedger(t.services).record(b.brand.id, {
      eventType: 'purchase', transactionId: tx(), externalUserId: null, amount: 3, currency: 'USD', source: 'stripe', clickToken: null, code: b.code.label, sandbox: true, occurredAt: new Date(),
    });

    // all: install, purchase, renewal, refund, signup. sales: purchase, renewal, unattributed purchase, sandbox purchase.
    const rows = await allDelivered(9);
    const byEndpoint = (id: string) => rows.filter((r) => r.endpoint_id === id).map((r) => r.event_type).sort();
    expect(byEndpoint(all.id)).toEqual(['install.attributed', 'lead.created', 'refund.created', 'sale.created', 'sale.created'].sort());
    expect(byEndpoint(sales.id)).toEqual(['sale.created', 'sale.created', 'sale.created', 'sale.created']);

    const { rows: facts } = await sql<{ id: string; kind: string; event_type: string | null; transaction_id: string | null }>`
      SELECT id, 'install' AS kind, NULL AS event_type, NULL AS transaction_id FROM installs WHERE install_id = 'dev-1'
      UNION ALL SELECT id, 'ledger', event_type, transaction_id FROM ledger_events WHERE transaction_id = ${sale}`.execute(t.services.db);
    for (const f of facts) ids[f.kind === 'install' ? 'install' : f.event_type!] = f.id;

    // Every body the receiver got verifies, and the same event has the same id and bytes at both endpoints.
    const got = receiver.received.filter((r) => r.path === '/all' || r.path === '/sales');
    expect(got).toHaveLength(9);
    const bodies = new Map<string, Event>();
    for (const r of got) {
      const secret = r.path === '/all' ? all.secret : sales.secret;
      const headers = { 'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']), 'webhook-signature': String(r.headers['webhook-signature']) };
      const body = new Webhook(secret).verify(r.body, headers) as Event;
      expect(headers['webhook-id']).toBe(body.id);
      bodies.set(`${r.path}|${body.data.id}`, body);
    }
    const installEvent = bodies.get(`/all|${ids.install}`)!;
    expect(installEvent).toEqual({
      id: `evt_${ids.install!.replace(/-/g, '')}`,
      type: 'install.attributed',
      timestamp: expect.any(String),
      brand_id: b.brand.id,
      test: false,
      data: {
        id: ids.install,
        install_id: 'dev-1',
        platform: 'ios',
        attributed: true,
        resolution_method: 'code',
        confidence: expect.any(Number),
        link: null,
        code: b.code.label,
        creator: { id: b.creator.id, name: 'Maya Lopez' },
        deep_link: null,
        app_version: '2.1',
        occurred_at: expect.any(String),
      },
    });
    const saleEvent = bodies.get(`/all|${ids.purchase}`)!;
    expect(saleEvent).toEqual({
      id: `evt_${ids.purchase!.replace(/-/g, '')}`,
      type: 'sale.created',
      timestamp: saleEvent.data.recorded_at,
      brand_id: b.brand.id,
      test: false,
      data: {
        id: ids.purchase,
        event_type: 'purchase',
        transaction_id: sale,
        source: 'pixel',
        amount: 49.99,
        currency: 'EUR',
        occurred_at: expect.any(String),
        sandbox: false,
        external_user_id: 'u1',
        link: null,
        creator: { id: b.creator.id, name: 'Maya Lopez' },
        code: b.code.label,
        resolution_method: 'code',
        confidence: expect.any(Number),
        verified: false,
        supersedes: null,
        recorded_at: expect.any(String),
      },
    });
    expect(bodies.get(`/sales|${ids.purchase}`)).toEqual(saleEvent);
    expect(bodies.get(`/all|${ids.refund}`)!.data).toMatchObject({ event_type: 'refund', amount: -10, transaction_id: sale });
  });

  it('sends a verified row that replaces a public one with `supersedes`', async () => {
    const before = (await deliveries()).length;
    const key = tx();
    expect((await postPublic(t, 'events', { ...pixel(), event_type: 'purchase', code: b.code.label, transaction_id: key, amount: 20 })).statusCode).toBe(200);
    await createLedger(t.services).record(b.brand.id, {
      eventType: 'purchase', transactionId: key, externalUserId: null, amount: 20, currency: 'USD', source: 'stripe', clickToken: null, code: b.code.label, sandbox: false, occurredAt: new Date(),
    });
    // Public and verified rows, at both endpoints.
    const rows = await allDelivered(before + 4);
    const { rows: ledger } = await sql<{ id: string; source: string }>`SELECT id, source FROM ledger_events WHERE transaction_id = ${key}`.execute(t.services.db);
    const publicRow = ledger.find((r) => r.source === 'pixel')!;
    const verifiedRow = ledger.find((r) => r.source === 'stripe')!;
    const verified = rows.find((r) => r.event_id === `evt_${verifiedRow.id.replace(/-/g, '')}` && r.endpoint_id === all.id)!;
    expect(JSON.parse(verified.payload).data).toMatchObject({ source: 'stripe', verified: true, supersedes: publicRow.id });
  });
});

describe('exactly once through faults', () => {
  let endpoint: { id: string };

  it('fans out from the outbox sweeper when a worker died between the ClickHouse write and its fan-out, and once only', async () => {
    await t.stopWorkers();
    endpoint = await createEndpoint({ url: receiver.url('/faults') });
    const before = (await deliveries()).length;
    const keys = [tx(), tx(), tx()];
    for (const key of keys) expect((await postPublic(t, 'events', { ...pixel(), event_type: 'purchase', code: b.code.label, transaction_id: key, amount: 7 })).statusCode).toBe(200);
    expect((await postPublic(t, 'installs', { ...pixel(), install_id: 'dev-crash', platform: 'ios', code: b.code.label })).statusCode).toBe(201);
    await t.services.queues.drain();
    // The dead worker's insert: ClickHouse has the rows, the outbox still holds them, no fan-out ran.
    const { rows: ledgerRows } = await sql`SELECT * FROM ledger_events WHERE transaction_id = ANY(${keys}::text[])`.execute(t.services.db);
    const { rows: installRows } = await sql`SELECT * FROM installs WHERE install_id = 'dev-crash'`.execute(t.services.db);
    await t.services.warehouse.insert('ledger', ledgerRows.map((r) => ledgerFact(r as never)));
    await t.services.warehouse.insert('installs', installRows.map((r) => installFact(r as never)));
    // Redis lost the jobs too: only the sweeper can find these facts.
    const redis = new Redis(t.config.redisUrl);
    await deleteKeysByPrefix(redis, `${t.config.queuePrefix}:ledger`);
    await deleteKeysByPrefix(redis, `${t.config.queuePrefix}:installs`);
    await redis.quit();
    startQuickWorkers();
    // Each fact goes to every endpoint taking it: 3 purchases to all three endpoints, the install to two.
    const rows = await allDelivered(before + 3 * 3 + 2);
    expect(rows.filter((r) => r.endpoint_id === endpoint.id).map((r) => r.event_type).sort()).toEqual(['install.attributed', 'sale.created', 'sale.created', 'sale.created']);
    const { rows: outbox } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM fact_outbox`.execute(t.services.db);
    expect(outbox[0]!.n).toBe(0);
  });

  it('makes no second delivery when a batch is replayed', async () => {
    const before = await deliveries();
    const { rows } = await sql`SELECT * FROM ledger_events ORDER BY recorded_at`.execute(t.services.db);
    const { rows: installs } = await sql`SELECT * FROM installs`.execute(t.services.db);
    await t.services.queues.addReplay('ledger', rows.map((r) => ledgerFact(r as never)));
    await t.services.queues.addReplay('installs', installs.map((r) => installFact(r as never)));
    await t.settle();
    // One more landing of every fact, and still one delivery per (endpoint, event).
    expect(await deliveries()).toHaveLength(before.length);
  });

  it('delivers what Redis lost while it was queued, once, through the delivery sweeper', async () => {
    await t.stopWorkers();
    const before = (await deliveries()).length;
    const receivedBefore = receiver.received.length;
    // The write path fans out (deliveries queued), then Redis loses every queued delivery.
    t.startWorkers({ sweeper: false, webhooks: undefined });
    const keys = [tx(), tx()];
    for (const key of keys) expect((await postPublic(t, 'events', { ...pixel(), event_type: 'signup', code: b.code.label, transaction_id: key })).statusCode).toBe(200);
    const queued = await until(deliveries, (rows) => rows.length === before + 2 * 2);
    expect(queued.slice(before).every((r) => r.status === 'pending')).toBe(true);
    await t.stopWorkers();
    const redis = new Redis(t.config.redisUrl);
    const jobs = await redis.keys(`${t.config.queuePrefix}:webhooks:*`);
    expect(jobs.length).toBeGreaterThan(0);
    await deleteKeysByPrefix(redis, `${t.config.queuePrefix}:webhooks`);
    await redis.quit();
    startQuickWorkers();
    const rows = await allDelivered(before + 4);
    const got = receiver.received.slice(receivedBefore).map((r) => String(r.headers['webhook-id']) + r.path);
    expect(got).toHaveLength(4);
    expect(new Set(got).size).toBe(4);
    expect(rows.slice(before).map((r) => r.event_type)).toEqual(Array(4).fill('lead.created'));
  });

  it('queues the deliveries of a batch to an endpoint as one job, which queuing again never doubles; a failed first attempt retries in a job of its own', async () => {
    await t.stopWorkers();
    const before = (await deliveries()).length;
    const receivedBefore = receiver.received.length;
    // Facts accepted while no worker runs are written, and fanned out, together once one starts.
    for (let i = 0; i < 6; i++) {
      expect((await postPublic(t, 'events', { ...pixel(), event_type: 'purchase', code: b.code.label, transaction_id: tx(), amount: 3 })).statusCode).toBe(200);
    }
    t.startWorkers({ sweeper: false, webhooks: undefined });
    // Each purchase goes to every endpoint taking sales (this file's earlier tests made them).
    await t.settle();
    const made = (await deliveries()).length - before;
    expect(made).toBeGreaterThanOrEqual(6 * 2);
    expect(made % 6).toBe(0);
    await t.stopWorkers();

    const { queue } = createWebhookServices(t.services.db, t.services.redis, t.config);
    const queued = async () => {
      const jobs = await queue.queue.getJobs(['wait', 'delayed', 'prioritized']);
      return jobs.map((j) => ({ id: j.id, endpointId: j.data.endpointId, ids: deliveriesOf(j.data) }));
    };
    const jobs = await queued();
    const { rows: pending } = await sql<{ id: string; endpoint_id: string; job_id: string }>`
      SELECT id, endpoint_id, job_id FROM webhook_deliveries WHERE status = 'pending' AND NOT test`.execute(t.services.db);
    expect(pending).toHaveLength(made);
    // Each delivery is in exactly one job, the one its row names, with its endpoint; a job carries several.
    expect(jobs.flatMap((j) => j.ids).sort()).toEqual(pending.map((d) => d.id).sort());
    for (const d of pending) expect(jobs.find((j) => j.ids.includes(d.id))).toMatchObject({ id: d.job_id, endpointId: d.endpoint_id });
    expect(jobs.length).toBeLessThan(pending.length);
    expect(Math.max(...jobs.map((j) => j.ids.length))).toBeGreaterThan(1);
    // Queued again as the delivery sweeper queues them (under their jobs' ids): nothing is added.
    await queue.add(pending.map((d) => ({ id: d.id, endpointId: d.endpoint_id, jobId: d.job_id })));
    expect(await queued()).toEqual(jobs);

    // Every first attempt fails: each delivery retries alone, and succeeds once.
    const seen = new Set<string>();
    receiver.state.respond = (req, res) => {
      const key = `${req.headers['webhook-id']}${req.url}`;
      res.statusCode = seen.has(key) ? 200 : 503;
      seen.add(key);
      res.end();
    };
    try {
      t.startWorkers({ sweeper: false, webhooks: { ...webhookWorkerOptions(t.config), retrySchedule: [0.2], sweep: { intervalMs: 200, overdueMs: 0 } } });
      const rows = await allDelivered(before + made);
      expect(rows.slice(before).map((r) => r.event_type)).toEqual(Array(made).fill('sale.created'));
      const { rows: attempts } = await sql<{ n: number }>`
        SELECT attempt_count AS n FROM webhook_deliveries WHERE id = ANY(${pending.map((d) => d.id)}::text[])`.execute(t.services.db);
      expect(attempts.map((a) => a.n)).toEqual(Array(made).fill(2));
      const got = receiver.received.slice(receivedBefore).map((r) => `${r.headers['webhook-id']}${r.path}`);
      expect(got).toHaveLength(2 * made);
      expect(new Set(got).size).toBe(made);
    } finally {
      receiver.state.respond = undefined;
    }
  });

  it('stops a batch at a 410 from its endpoint: the rest of its deliveries end without an attempt', async () => {
    const gone = await createEndpoint({ url: receiver.url('/gone'), event_types: ['lead.created'] });
    await t.stopWorkers();
    const receivedBefore = receiver.received.length;
    for (let i = 0; i < 12; i++) {
      expect((await postPublic(t, 'events', { ...pixel(), event_type: 'signup', code: b.code.label, transaction_id: tx() })).statusCode).toBe(200);
    }
    receiver.state.respond = (req, res) => {
      res.statusCode = req.url === '/gone' ? 410 : 200;
      res.end();
    };
    try {
      startQuickWorkers();
      const ended = async () =>
        (await sql<{ status: string; attempt_count: number }>`SELECT status, attempt_count FROM webhook_deliveries WHERE endpoint_id = ${gone.id}`.execute(t.services.db)).rows;
      const rows = await until(ended, (r) => r.length === 12 && r.every((d) => d.status === 'failed'));
      // Only the attempts in flight when the 410 came (at most 4 per endpoint) were made; the 410's is recorded.
      expect(rows.filter((d) => d.attempt_count > 0).length).toBeGreaterThanOrEqual(1);
      const made = receiver.received.slice(receivedBefore).filter((r) => r.path === '/gone').length;
      expect(made).toBeGreaterThanOrEqual(1);
      expect(made).toBeLessThanOrEqual(4);
      expect((await portal.get(`/webhooks/${gone.id}`)).json()).toMatchObject({ status: 'disabled', disabled_reason: 'gone' });
    } finally {
      receiver.state.respond = undefined;
    }
  });
});
