import { randomUUID } from 'node:crypto';
import { createServer, request, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { eventBody } from '../src/attribution/outbound-webhooks/events';
import { createWebhookServices } from '../src/attribution/outbound-webhooks/service';
import { buildApp } from '../src/app';
import type { Config } from '../src/config';
import { closeServices, createServices, migrate, type Services } from '../src/services';
import { startWorkerThread, type Workers } from '../workers';
import { adminPost, percentile, round } from './helpers';
import { benchEnvironment, benchLogger } from './environment';
import type { Bench } from './run';

/**
 * Outbound webhooks against a local receiver (docs/webhooks.md, "Receiving webhooks"):
 * - webhooks-deliveries: deliveries a second with nothing else running, beside the receiver's own
 *   ceiling (a plain keep-alive client at the same concurrency); target at least 1,500/s.
 * - webhooks-lag: 500 attributed events a second over several brands, with an endpoint each and,
 *   as the baseline in the same run, without: every event delivered, delivery lag (recorded to
 *   first 2xx) p99 under 1,500 ms, ingestion's p99 within 10% of the baseline's.
 */
export const names = ['webhooks-deliveries', 'webhooks-lag'];

const BRANDS = 10;
const DELIVERIES = 15_000;
const RATE = 500;
const LOAD_S = 10;

type Receiver = { url: string; received: { at: number; body: string }[]; close(): Promise<void> };

/** Answers 204 at once, recording when each body arrived. */
async function startReceiver(): Promise<Receiver> {
  const received: { at: number; body: string }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ at: Date.now(), body: Buffer.concat(chunks).toString() });
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

/** The receiver's ceiling: `total` POSTs of `body` over `concurrency` keep-alive connections. */
async function ceiling(url: string, body: string, total: number, concurrency: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  let next = 0;
  const started = performance.now();
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(`${url}/ceiling`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) await one();
    }),
  );
  agent.destroy();
  return total / ((performance.now() - started) / 1000);
}

async function setUp(app: FastifyInstance, config: Config) {
  const post = adminPost(app, config.adminJwtSecret);
  const creator = await post('/api/internal/creators', { name: 'Maya Lopez', first_name: 'Maya' });
  const brands: { id: string; pixelKey: string; code: string }[] = [];
  for (let i = 0; i < BRANDS; i++) {
    const brand = await post('/api/internal/brands', { name: `Bench ${i}` });
    const code = `MAYA${i}`;
    await post('/api/internal/attribution-codes', { brand_id: brand.id, creator_id: creator.id, label: code });
    brands.push({ id: brand.id, pixelKey: brand.pixel_key, code });
  }
  return brands;
}

const pending = async (services: Services) =>
  Number((await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'`.execute(services.db)).rows[0]!.n);

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** RATE events a second for LOAD_S seconds, spread over the brands: each request's latency in ms. */
async function paced(base: string, brands: { pixelKey: string; code: string }[]): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const latencies: number[] = [];
  const sends: Promise<void>[] = [];
  const started = performance.now();
  const total = RATE * LOAD_S;
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const brand = brands[i % brands.length]!;
    const body = JSON.stringify({ pixel_key: brand.pixelKey, event_type: 'purchase', transaction_id: randomUUID(), code: brand.code, amount: 19.99, currency: 'EUR' });
    const t0 = performance.now();
    sends.push(
      new Promise<void>((resolve, reject) => {
        const req = request(`${base}/api/public/attribution/events`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode !== 200) reject(new Error(`events: ${res.statusCode}`));
            latencies.push(performance.now() - t0);
            resolve();
          });
        });
        req.on('error', reject);
        req.end(body);
      }),
    );
  }
  await Promise.all(sends);
  agent.destroy();
  return latencies;
}

const bench: Bench = async (emit, filter) => {
  const env = benchEnvironment('webhooks');
  env.config.rateLimits = { ...env.config.rateLimits, publicIp: 0 };
  // The receiver is on loopback: allowed as tests allow it.
  env.config.webhooks = { ...env.config.webhooks, requireHttps: false, allowedNetworks: ['127.0.0.0/8'] };
  const log = benchLogger(env.config.logLevel);
  let services: Services | undefined;
  let app: FastifyInstance | undefined;
  let workers: Workers | undefined;
  const receiver = await startReceiver();
  try {
    services = await createServices(env.config, log);
    await migrate(services);
    workers = await startWorkerThread(env.config, log, {
      onExit: (code) => {
        console.error(`the workers thread exited with ${code}: no figures from this run`);
        process.exit(1);
      },
    });
    app = await buildApp(services);
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const brands = await setUp(app, env.config);
    const webhooks = createWebhookServices(services.db, services.redis, env.config);
    const running = services;

    if (!filter || 'webhooks-deliveries'.includes(filter)) {
      // Deliveries as the fan-out makes them, one endpoint per brand, queued at once.
      const endpoints: { brand: string; id: string }[] = [];
      for (const b of brands) endpoints.push({ brand: b.id, id: (await webhooks.endpoints.create(b.id, { url: `${receiver.url}/direct/${b.id}` })).row.id });
      const now = new Date();
      const body = eventBody({ id: 'evt_x', type: 'sale.created', brandId: brands[0]!.id, recordedAt: now, data: { id: randomUUID(), event_type: 'purchase', amount: 19.99, currency: 'EUR', transaction_id: 'bench', source: 'pixel' } });
      const rows = Array.from({ length: DELIVERIES }, (_, i) => {
        const e = endpoints[i % endpoints.length]!;
        return { id: randomUUID(), endpoint_id: e.id, brand_id: e.brand, event_id: `evt_${randomUUID().replace(/-/g, '')}`, event_type: 'sale.created', payload: body, fact_recorded_at: now.toISOString() };
      });
      const baselineRps = await ceiling(receiver.url, body, DELIVERIES, endpoints.length * 4);
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < rows.length; i += 1000) {
        await sql`INSERT INTO webhook_deliveries (id, endpoint_id, brand_id, event_id, event_type, payload, fact_recorded_at, next_attempt_at)
          SELECT d.id, d.endpoint_id, d.brand_id, d.event_id, d.event_type, d.payload, d.fact_recorded_at, now()
          FROM jsonb_to_recordset(${JSON.stringify(rows.slice(i, i + 1000))}::jsonb)
            AS d(id text, endpoint_id text, brand_id text, event_id text, event_type text, payload text, fact_recorded_at timestamptz)`.execute(running.db);
        await webhooks.queue.add(rows.slice(i, i + 1000).map((r) => ({ id: r.id })));
      }
      await until(async () => (await pending(running)) === 0, 300_000);
      const seconds = (performance.now() - started) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      const rps = DELIVERIES / seconds;
      emit({
        name: 'webhooks-deliveries',
        deliveries_rps: round(rps, 0),
        target_deliveries_rps: 1500,
        cpu_per_delivery_ms: round((cpu.user + cpu.system) / 1000 / DELIVERIES, 3),
        deliveries: DELIVERIES,
        endpoints: endpoints.length,
        baseline: { receiver_ceiling_rps: round(baselineRps, 0) },
        ratio: round(rps / baselineRps),
      });
      for (const e of endpoints) await webhooks.endpoints.delete(e.brand, e.id);
    }

    if (!filter || 'webhooks-lag'.includes(filter)) {
      // The baseline first: the same load without endpoints.
      const without = await paced(base, brands);
      await until(async () => (await running.queues.counts()).ledger!.waiting === 0, 60_000);
      for (const b of brands) await webhooks.endpoints.create(b.id, { url: `${receiver.url}/lag/${b.id}` });
      const before = receiver.received.length;
      const withEndpoints = await paced(base, brands);
      const expected = RATE * LOAD_S;
      await until(async () => receiver.received.length - before >= expected && (await pending(running)) === 0, 120_000);
      const got = receiver.received.slice(before).filter((r) => r.body.includes('"sale.created"'));
      const ids = new Set(got.map((r) => JSON.parse(r.body).id as string));
      const lags = got.map((r) => r.at - Date.parse(JSON.parse(r.body).timestamp as string));
      const p99 = (xs: number[]) => round(percentile(xs, 99), 1);
      // Where the lag is: from recording to the delivery's creation (ingestion into ClickHouse, then the fan-out).
      const { rows: fanout } = await sql<{ ms: number }>`
        SELECT extract(epoch FROM created_at - fact_recorded_at)::float8 * 1000 AS ms FROM webhook_deliveries WHERE NOT test AND payload LIKE '%"sale.created"%'`.execute(running.db);
      const fanoutMs = fanout.map((r) => Number(r.ms));
      emit({
        name: 'webhooks-lag',
        events_per_s: RATE,
        brands: BRANDS,
        events: expected,
        delivered: ids.size,
        received: got.length,
        lag_p50_ms: round(percentile(lags, 50), 1),
        lag_p99_ms: p99(lags),
        fanout_lag_p50_ms: round(percentile(fanoutMs, 50), 1),
        fanout_lag_p99_ms: p99(fanoutMs),
        target_lag_p99_ms: 1500,
        ingestion_p99_ms: p99(withEndpoints),
        baseline: { ingestion_p99_ms: p99(without) },
        ratio: round(p99(withEndpoints) / p99(without)),
        target_ratio: 1.1,
      });
    }
  } finally {
    await app?.close();
    await workers?.close();
    if (services) await closeServices(services);
    await receiver.close();
    await env.remove();
  }
};

export default bench;
