import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => destroyTestService(t));

describe('operations (CONTRACT 7)', () => {
  it('GET /healthz answers ok when Postgres, Redis and ClickHouse answer', async () => {
    const res = await t.request({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
  });

  it('GET /metrics exposes queue depths, ingestion lag and request latency', async () => {
    await t.request({ method: 'GET', url: '/healthz' });
    const res = await t.request({ method: 'GET', url: '/metrics' });
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

  it('answers 503 from /healthz when a store is down', async () => {
    const ended = new Promise((resolve) => t.services.redis.once('end', resolve));
    t.services.redis.disconnect();
    const res = await t.request({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ ok: false, redis: false, postgres: true, clickhouse: true });
    await ended; // connect() refuses a connection still closing
    await t.services.redis.connect();
  });
});
