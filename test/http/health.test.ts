import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthProbes } from '../../src/metrics';
import { destroyTestService, eventually, startTestService, type TestService } from '../helpers/harness';

const METRICS_TOKEN = 'metrics-token-for-the-scraper';
let t: TestService;
beforeAll(async () => {
  t = await startTestService({ env: { METRICS_TOKEN } });
});
const metrics = (authorization = `Bearer ${METRICS_TOKEN}`) => t.request({ method: 'GET', url: '/metrics', headers: { authorization } });
const probesRun = async () => (await healthProbes.get()).values[0]?.value ?? 0;
afterAll(async () => destroyTestService(t));

describe('operations', () => {
  it('GET /healthz answers ok when Postgres, Redis and ClickHouse answer', async () => {
    const res = await t.request({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
  });

  it('GET /metrics exposes queue depths, ingestion lag and request latency', async () => {
    await t.request({ method: 'GET', url: '/healthz' });
    const res = await metrics();
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/plain/);
    expect(res.body).toMatch(/svc_queue_jobs\{queue="clicks",state="waiting"\} 0/);
    expect(res.body).toContain('# TYPE svc_ingestion_lag_seconds histogram');
    expect(res.body).toMatch(/svc_http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\} \d+/);
  });

  it('answers unknown routes with 404 not_found', async () => {
    const res = await t.request({ method: 'GET', url: '/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'not_found' });
  });

  it('asks for METRICS_TOKEN on /metrics when it is set (401 without it), never on /healthz', async () => {
    for (const authorization of ['', 'Bearer wrong-token', `Basic ${METRICS_TOKEN}`, `Bearer ${METRICS_TOKEN}x`]) {
      const res = await metrics(authorization);
      expect([res.statusCode, res.json()]).toEqual([401, { error: 'unauthorized' }]);
    }
    expect((await metrics()).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });

  it('probes the stores at most once a second, however many /healthz and /metrics requests come', async () => {
    const before = await probesRun();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 ? metrics() : t.request({ method: 'GET', url: '/healthz' }))),
    );
    expect(answers.map((a) => a.statusCode)).toEqual(Array(30).fill(200));
    // One probe, or two when the last one began just under a second before these.
    expect((await probesRun()) - before).toBeLessThanOrEqual(2);
  });

  it('answers 503 from /healthz when a store is down', async () => {
    const ended = new Promise((resolve) => t.services.redis.once('end', resolve));
    t.services.redis.disconnect();
    // A probe begun less than a second ago may still answer for the moment before.
    const res = await eventually(() => t.request({ method: 'GET', url: '/healthz' }), (r) => r.statusCode === 503, 5_000);
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ ok: false, redis: false, postgres: true, clickhouse: true });
    await ended; // connect() refuses a connection still closing
    await t.services.redis.connect();
  });
});
