import { randomUUID } from 'node:crypto';
import { request, Agent } from 'node:http';
import { Worker } from 'node:worker_threads';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { eventBody } from '../src/attribution/outbound-webhooks/events';
import { insertDeliveries } from '../src/attribution/outbound-webhooks/fan-out';
import { createWebhookServices } from '../src/attribution/outbound-webhooks/service';
import type { Config } from '../src/config';
import type { Services } from '../src/services';
import { adminPost, percentile, round } from './helpers';
import { benchEnvironment, benchLogger, type InProcessService, startInProcess } from './environment';
import type { Bench } from './run';

/**
 * Outbound webhooks against a local receiver (docs/webhooks.md, "Receiving webhooks"):
 * - webhooks-deliveries: deliveries a second with nothing else running, beside the receiver's own
 *   ceiling (a plain keep-alive client at the same concurrency); target at least 1,500/s; CPU per
 *   delivery no more than one install's acceptance, measured the same way in the same run.
 * - webhooks-lag: 500 attributed events a second over several brands, rounds alternating without
 *   endpoints (the baseline) and with one each, after a warm-up round of both: every event delivered,
 *   delivery lag (recorded to first 2xx) p99 under 1,500 ms, ingestion's p99 (the median of the
 *   rounds') within 10% of the baseline's.
 */
export const names = ['webhooks-deliveries', 'webhooks-lag'];

const BRANDS = 10;
const DELIVERIES = 15_000;
const RATE = 500;
const LOAD_S = 10;
/** Alternating rounds of the lag load without and with endpoints, after one unreported round of each. */
const ROUNDS = 3;

type Received = { at: number; id: string; type: string; timestamp: string };
type Receiver = { url: string; count(): number; received(from: number): Promise<Received[]>; close(): Promise<void> };

/** The receiver's code, run in its own thread: it answers 204 at once and notes each body's arrival. */
const RECEIVER = `
const { createServer } = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const count = new Int32Array(workerData);
const received = [];
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    const body = JSON.parse(Buffer.concat(chunks).toString());
    received.push({ at, id: body.id, type: body.type, timestamp: body.timestamp });
    Atomics.add(count, 0, 1);
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => {
  if (m.from !== undefined) parentPort.postMessage({ received: received.slice(m.from) });
  else server.closeAllConnections(), server.close(() => parentPort.postMessage({ closed: true }));
});
`;

/**
 * Answers 204 at once, noting when each body arrived, in a thread of its own: on the service's
 * HTTP thread its work would be counted as the service's (ingestion's latency, CPU).
 */
async function startReceiver(): Promise<Receiver> {
  const shared = new SharedArrayBuffer(4);
  const count = new Int32Array(shared);
  const thread = new Worker(RECEIVER, { eval: true, workerData: shared });
  const next = <T>() => new Promise<T>((resolve) => thread.once('message', resolve));
  const { port } = await next<{ port: number }>();
  return {
    url: `http://127.0.0.1:${port}`,
    count: () => Atomics.load(count, 0),
    received: async (from) => {
      const answer = next<{ received: Received[] }>();
      thread.postMessage({ from });
      return (await answer).received;
    },
    close: async () => {
      const closed = next();
      thread.postMessage({});
      await closed;
      await thread.terminate();
    },
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

const INSTALLS = 3000;

/**
 * CPU of one install's acceptance, measured as deliveries are (this process: the service's HTTP
 * and workers' threads and the client): INSTALLS unattributed installs over 32 keep-alive
 * connections until the last is answered and the installs queue is empty.
 */
async function installCpu(base: string, pixelKey: string, services: Services): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  let next = 0;
  const before = process.cpuUsage();
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const body = JSON.stringify({ pixel_key: pixelKey, install_id: randomUUID(), platform: 'ios', app_version: '2.4.1' });
      const req = request(`${base}/api/public/attribution/installs`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', () => ((res.statusCode ?? 0) < 300 ? resolve() : reject(new Error(`installs: ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next++ < INSTALLS) await one();
    }),
  );
  await until(async () => {
    const c = (await services.queues.counts()).installs!;
    return c.waiting === 0 && c.active === 0;
  }, 60_000);
  const cpu = process.cpuUsage(before);
  agent.destroy();
  return (cpu.user + cpu.system) / 1000 / INSTALLS;
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

const median = (xs: number[]) => percentile(xs, 50);

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
  let service: InProcessService | undefined;
  const receiver = await startReceiver();
  try {
    service = await startInProcess(env.config, log);
    const { services: running, app, base } = service;
    const brands = await setUp(app, env.config);
    const webhooks = createWebhookServices(running.db, running.redis, env.config);

    if (!filter || 'webhooks-deliveries'.includes(filter)) {
      // Deliveries as the fan-out makes them, one endpoint per brand, queued at once.
      const endpoints: { brand: string; id: string }[] = [];
      for (const b of brands) endpoints.push({ brand: b.id, id: (await webhooks.endpoints.create(b.id, { url: `${receiver.url}/direct/${b.id}` })).row.id });
      const now = new Date();
      const body = eventBody({ id: 'evt_x', type: 'sale.created', brandId: brands[0]!.id, recordedAt: now, data: { id: randomUUID(), event_type: 'purchase', amount: 19.99, currency: 'EUR', transaction_id: 'bench', source: 'pixel' } });
      const rows = Array.from({ length: DELIVERIES }, (_, i) => {
        const e = endpoints[i % endpoints.length]!;
        return { id: randomUUID(), endpoint_id: e.id, brand_id: e.brand, event_id: `evt_${randomUUID().replace(/-/g, '')}`, event_type: 'sale.created', payload: body, fact_recorded_at: now };
      });
      const baselineRps = await ceiling(receiver.url, body, DELIVERIES, endpoints.length * 4);
      const installMs = await installCpu(base, brands[0]!.pixelKey, running);
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      // As the fan-out records and queues them, in batches of 1,000.
      for (let i = 0; i < rows.length; i += 1000) await webhooks.queue.add(await insertDeliveries(running.db, rows.slice(i, i + 1000)));
      await until(async () => (await pending(running)) === 0, 300_000);
      const seconds = (performance.now() - started) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      const rps = DELIVERIES / seconds;
      emit({
        name: 'webhooks-deliveries',
        deliveries_rps: round(rps, 0),
        target_deliveries_rps: 1500,
        cpu_per_delivery_ms: round((cpu.user + cpu.system) / 1000 / DELIVERIES, 3),
        target_cpu_per_delivery_ms: round(installMs, 3),
        deliveries: DELIVERIES,
        endpoints: endpoints.length,
        baseline: { receiver_ceiling_rps: round(baselineRps, 0), cpu_per_install_ms: round(installMs, 3) },
        ratio: round(rps / baselineRps),
      });
      for (const e of endpoints) await webhooks.endpoints.delete(e.brand, e.id);
    }

    if (!filter || 'webhooks-lag'.includes(filter)) {
      // Rounds alternate: the same load without endpoints (the baseline), then with one per brand.
      const without: number[] = [];
      const withEndpoints: number[] = [];
      const fanoutMs: number[] = [];
      const rounds: { without: number; with: number; withoutP50: number; withP50: number }[] = [];
      let before = receiver.count();
      // Round 0 warms both paths (JIT, connections, ClickHouse's first parts) and is not reported.
      for (let n = 0; n <= ROUNDS; n++) {
        const alone = await paced(base, brands);
        await until(async () => (await running.queues.counts()).ledger!.waiting === 0, 60_000);
        const created = [];
        for (const b of brands) created.push({ brand: b.id, id: (await webhooks.endpoints.create(b.id, { url: `${receiver.url}/lag/${b.id}` })).row.id });
        const sent = receiver.count();
        const beside = await paced(base, brands);
        await until(async () => receiver.count() - sent >= RATE * LOAD_S && (await pending(running)) === 0, 120_000);
        // Where the lag is: from recording to the delivery's creation (ingestion into ClickHouse, then the fan-out).
        const { rows: fanout } = await sql<{ ms: number }>`
          SELECT extract(epoch FROM created_at - fact_recorded_at)::float8 * 1000 AS ms FROM webhook_deliveries WHERE NOT test AND event_type = 'sale.created'`.execute(running.db);
        // Deleting the endpoints deletes their deliveries.
        for (const e of created) await webhooks.endpoints.delete(e.brand, e.id);
        if (n === 0) {
          before = receiver.count();
          continue;
        }
        fanoutMs.push(...fanout.map((r) => Number(r.ms)));
        without.push(...alone);
        withEndpoints.push(...beside);
        rounds.push({ without: round(percentile(alone, 99), 1), with: round(percentile(beside, 99), 1), withoutP50: percentile(alone, 50), withP50: percentile(beside, 50) });
      }
      const expected = RATE * LOAD_S * ROUNDS;
      const got = (await receiver.received(before)).filter((r) => r.type === 'sale.created');
      const ids = new Set(got.map((r) => r.id));
      const lags = got.map((r) => r.at - Date.parse(r.timestamp));
      const p99 = (xs: number[]) => round(percentile(xs, 99), 1);
      emit({
        name: 'webhooks-lag',
        events_per_s: RATE,
        brands: BRANDS,
        rounds: ROUNDS,
        events: expected,
        delivered: ids.size,
        received: got.length,
        lag_p50_ms: round(percentile(lags, 50), 1),
        lag_p99_ms: p99(lags),
        fanout_lag_p50_ms: round(percentile(fanoutMs, 50), 1),
        fanout_lag_p99_ms: p99(fanoutMs),
        target_lag_p99_ms: 1500,
        // Rounds' p99 vary more than the load's cost: the ratio compares their medians (all requests pooled beside it).
        ingestion_p99_ms: median(rounds.map((r) => r.with)),
        ingestion_p50_ms: median(rounds.map((r) => r.withP50)),
        baseline: { ingestion_p99_ms: median(rounds.map((r) => r.without)), ingestion_p50_ms: median(rounds.map((r) => r.withoutP50)), ingestion_pooled_p99_ms: p99(without) },
        ratio: round(median(rounds.map((r) => r.with)) / median(rounds.map((r) => r.without))),
        pooled_ingestion_p99_ms: p99(withEndpoints),
        pooled_ratio: round(p99(withEndpoints) / p99(without)),
        rounds_ingestion_p99_ms: rounds.map((r) => r.with),
        rounds_baseline_ingestion_p99_ms: rounds.map((r) => r.without),
        target_ratio: 1.1,
      });
    }
  } finally {
    await service?.close();
    await receiver.close();
    await env.remove();
  }
};

export default bench;
