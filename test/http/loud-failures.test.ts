import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config';
import { type AttributionBrand, attributionBrand, postPublic, uniqueId } from '../attribution/public/setup';
import { destroyTestService, eventually, sleep, startTestService, type TestService } from '../helpers/harness';

/**
 * Loud failures: /healthz stays 200 but lists what is degraded when a
 * queue stalls or ingestion lags; /metrics shows per-queue counts, the oldest waiting job's age,
 * the accepted-to-queryable lag, insert and queue-add failures and store reachability; and the
 * alert rules in deploy/alerts.yml name only metrics that /metrics exports.
 */
let t: TestService;
let acme: AttributionBrand;

beforeAll(async () => {
  // Thresholds of a second or two, and no consumers once the set-up is written, so a test can make the queues stall.
  t = await startTestService({ env: { QUEUE_STALLED_SECONDS: '1', INGESTION_LAG_DEGRADED_SECONDS: '2' } });
  acme = await attributionBrand(t);
  await t.settle();
  await t.stopWorkers();
});
afterAll(async () => destroyTestService(t));

/** The value of one sample of /metrics, e.g. `svc_store_up{store="redis"}`. */
function sample(metrics: string, series: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`${series} `));
  if (!line) throw new Error(`no sample ${series} in /metrics`);
  return Number(line.slice(series.length + 1));
}

describe('degraded but serving', () => {
  it('lists queue_stalled:<kind> and ingestion_lag while nothing consumes, shows them in /metrics, and clears once the workers catch up', async () => {
    expect((await t.request({ method: 'GET', url: '/healthz' })).json()).toEqual({ ok: true });
    expect((await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'maya' })).statusCode).toBe(200);
    const install = await postPublic(t, 'installs', { pixel_key: acme.brand.pixel_key, install_id: uniqueId(), platform: 'android' });
    expect(install.statusCode).toBe(201);
    await sleep(2500);

    const health = await t.request({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ ok: true, degraded: expect.arrayContaining(['ingestion_lag', 'queue_stalled:clicks', 'queue_stalled:installs']) });

    const metrics = (await t.request({ method: 'GET', url: '/metrics' })).body;
    expect(sample(metrics, 'svc_queue_oldest_waiting_seconds{queue="clicks"}')).toBeGreaterThanOrEqual(2);
    expect(sample(metrics, 'svc_queue_oldest_waiting_seconds{queue="ledger"}')).toBe(0);
    expect(sample(metrics, 'svc_ingestion_pending_seconds{kind="installs"}')).toBeGreaterThanOrEqual(2);
    expect(sample(metrics, 'svc_queue_jobs{queue="clicks",state="waiting"}')).toBe(1);
    for (const state of ['active', 'delayed', 'failed']) expect(sample(metrics, `svc_queue_jobs{queue="clicks",state="${state}"}`)).toBe(0);
    for (const store of ['postgres', 'redis', 'clickhouse']) expect(sample(metrics, `svc_store_up{store="${store}"}`)).toBe(1);
    expect(sample(metrics, 'svc_queue_add_failures_total{kind="clicks"}')).toBe(0);

    t.startWorkers();
    await t.settle();
    // The install leaves the outbox once ClickHouse has it; then nothing is degraded.
    await eventually(() => t.request({ method: 'GET', url: '/healthz' }).then((r) => r.json()), (body) => !body.degraded, 15_000);
    const after = (await t.request({ method: 'GET', url: '/metrics' })).body;
    expect(sample(after, 'svc_queue_oldest_waiting_seconds{queue="clicks"}')).toBe(0);
    expect(sample(after, 'svc_ingestion_pending_seconds{kind="installs"}')).toBeLessThan(2);
    expect(sample(after, 'svc_batch_failures_total{kind="clicks"}')).toBe(0);
  });

  it('counts ClickHouse insert failures per kind while inserts fail', async () => {
    const failures = async () => {
      const metrics = (await t.request({ method: 'GET', url: '/metrics' })).body;
      return sample(metrics, 'svc_batch_failures_total{kind="ledger"}');
    };
    const before = await failures();
    await t.services.warehouse.command('RENAME TABLE ledger TO ledger_away');
    try {
      t.startWorkers();
      expect((await postPublic(t, 'events', { pixel_key: acme.brand.pixel_key, transaction_id: uniqueId(), amount: 2 })).statusCode).toBe(200);
      await eventually(failures, (n) => n > before, 15_000);
    } finally {
      await t.services.warehouse.command('RENAME TABLE ledger_away TO ledger');
    }
    await t.settle(30_000);
  });

  it('shows a store that stops answering as svc_store_up 0, and counts the queue adds that fail', async () => {
    const ended = new Promise((resolve) => t.services.redis.once('end', resolve));
    t.services.redis.disconnect();
    try {
      // Accepted through the outbox; its add to the queue fails.
      const install = await postPublic(t, 'installs', { pixel_key: acme.brand.pixel_key, install_id: uniqueId(), platform: 'ios' });
      expect(install.statusCode).toBe(201);
      const metrics = (await t.request({ method: 'GET', url: '/metrics' })).body;
      expect(sample(metrics, 'svc_store_up{store="redis"}')).toBe(0);
      expect(sample(metrics, 'svc_store_up{store="postgres"}')).toBe(1);
      await eventually(
        async () => sample((await t.request({ method: 'GET', url: '/metrics' })).body, 'svc_queue_add_failures_total{kind="installs"}'),
        (n) => n >= 1,
      );
    } finally {
      await ended; // connect() refuses a connection still closing
      await t.services.redis.connect();
    }
  });
});

describe('alert rules (deploy/alerts.yml)', () => {
  it('parse, and every expression names only metrics that /metrics exports; the health thresholds match the defaults', async () => {
    const rules = parse(readFileSync(new URL('../../deploy/alerts.yml', import.meta.url), 'utf8')) as {
      groups: { name: string; rules: { alert: string; expr: string; for: string; labels: { severity: string }; annotations: { summary: string } }[] }[];
    };
    const exported = new Set(
      [...(await t.request({ method: 'GET', url: '/metrics' })).body.matchAll(/^# TYPE (\S+) (\w+)$/gm)].flatMap(([, name, type]) =>
        type === 'histogram' ? [`${name}_bucket`, `${name}_count`, `${name}_sum`] : [name!],
      ),
    );
    const all = rules.groups.flatMap((g) => g.rules);
    expect(all.length).toBeGreaterThanOrEqual(8);
    for (const rule of all) {
      expect(rule.alert).toMatch(/^Svc[A-Za-z]+$/);
      expect(rule.for).toMatch(/^\d+[sm]$/);
      expect(['page', 'warning']).toContain(rule.labels.severity);
      expect(rule.annotations.summary.length).toBeGreaterThan(10);
      const names = [...rule.expr.matchAll(/\bsvc_[a-z0-9_]+/g)].map((m) => m[0]);
      expect(names.length, rule.alert).toBeGreaterThan(0);
      for (const name of names) expect(exported.has(name), `${rule.alert}: ${name}`).toBe(true);
    }
    const defaults = loadConfig({ DATA_DIR: t.config.dataDir, NODE_ENV: 'test' }).degradedAfter;
    const byName = new Map(all.map((r) => [r.alert, r.expr]));
    expect(byName.get('SvcQueueStalled')).toMatch(new RegExp(`> ${defaults.queueStalledSeconds}$`));
    expect(byName.get('SvcIngestionLag')).toMatch(new RegExp(`> ${defaults.ingestionLagSeconds}$`));
  });
});
