import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AttributionBrand, attributionBrand, IPHONE, postPublic, uniqueId } from '../attribution/public/setup';
import { destroyTestService, eventually, sleep, startTestService, type TestService } from '../helpers/harness';
import { PrivateRedis } from '../helpers/private-redis';
import { createPortalUser, PORTAL_PASSWORD } from '../portal/helpers';

/**
 * A Redis that is hung (SIGSTOP) or gone (SIGKILL) never holds a request. Clicks
 * and portal login answer 503 unavailable, installs and events are still accepted (through
 * the Postgres outbox, IP matching skipped), /healthz answers 503 within 2 s, no answer takes
 * 5 s, and once Redis is back everything recovers and every accepted fact reaches ClickHouse.
 */
let redis: PrivateRedis;
let t: TestService;
let acme: AttributionBrand;
const email = `owner-${uniqueId()}@acme.example`;
const accepted = { installs: [] as string[], events: [] as string[] };

beforeAll(async () => {
  redis = await PrivateRedis.start();
  // The sweeper looks often, so facts whose queue add failed are re-sent soon after Redis is back.
  t = await startTestService({ env: { REDIS_URL: redis.url, TRUST_PROXY: '127.0.0.1' }, workers: false }); // clicks name their visitor's IP
  t.startWorkers({ sweeper: { intervalMs: 1000, graceMs: 2000 }, webhooks: undefined });
  acme = await attributionBrand(t);
  await createPortalUser(t, acme.brand.id, email);
}, 60_000);

afterAll(async () => {
  redis.resume();
  await redis.kill();
  await redis.restart(); // destroyTestService deletes the test's keys
  // BullMQ workers that lived through the kill may not finish closing (their loops wait on the
  // lost server's blocking command); main.ts ends such a process after 25 s.
  await Promise.race([t.stopWorkers(), sleep(5000)]);
  t.workers = undefined;
  await destroyTestService(t);
  await redis.kill();
});

type Timed = { res: LightMyRequestResponse; ms: number };

async function timed(request: Promise<LightMyRequestResponse>): Promise<Timed> {
  const started = performance.now();
  const res = await request;
  return { res, ms: performance.now() - started };
}

/** One of each request docs/operations.md#a-store-down-or-hung names, sent together; each answer timed. */
async function round() {
  const installId = uniqueId('install');
  const transactionId = uniqueId('order');
  const [click, install, event, login, health] = await Promise.all([
    timed(postPublic(t, 'clicks', { domain: acme.hostname, slug: 'app', user_agent: IPHONE, ip: '203.0.113.9' })),
    timed(postPublic(t, 'installs', { pixel_key: acme.brand.pixel_key, install_id: installId, platform: 'ios' }, { remoteAddress: '203.0.113.9' })),
    timed(postPublic(t, 'events', { pixel_key: acme.brand.pixel_key, event_type: 'purchase', transaction_id: transactionId, amount: 12.5, currency: 'USD' })),
    timed(t.request({ method: 'POST', url: '/api/client/auth/login', payload: { email, password: PORTAL_PASSWORD } })),
    timed(t.request({ method: 'GET', url: '/healthz' })),
  ]);
  if (install.res.statusCode === 201) accepted.installs.push(installId);
  if (event.res.statusCode === 200) accepted.events.push(transactionId);
  return { click, install, event, login, health };
}

function expectOutageAnswers(r: Awaited<ReturnType<typeof round>>) {
  expect([r.click.res.statusCode, r.click.res.json()]).toEqual([503, { error: 'unavailable' }]);
  expect([r.login.res.statusCode, r.login.res.json()]).toEqual([503, { error: 'unavailable' }]);
  expect(r.install.res.statusCode, r.install.res.body).toBe(201);
  // Redis away: the IP match is skipped, though this IP clicked the app link before the outage.
  expect(r.install.res.json().install.resolution_method).toBe('unattributed');
  expect(r.event.res.statusCode, r.event.res.body).toBe(200);
  expect(r.health.res.statusCode).toBe(503);
  expect(r.health.res.json()).toMatchObject({ ok: false, redis: false, postgres: true, clickhouse: true });
  expect(r.health.ms).toBeLessThan(2000);
  for (const { ms } of Object.values(r)) expect(ms).toBeLessThan(5000);
}

describe('Redis hung, then gone, then back', () => {
  it('answers everything normally while Redis is up', async () => {
    await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'app', user_agent: IPHONE, ip: '203.0.113.9' });
    const r = await round();
    expect(r.click.res.statusCode, r.click.res.body).toBe(200);
    expect(r.install.res.json().install.resolution_method).toBe('ip');
    expect(r.login.res.statusCode).toBe(200);
    expect(r.health.res.statusCode).toBe(200);
  });

  it('while Redis is hung (SIGSTOP), answers within the time limits, with no offline queue building up', async () => {
    // /healthz answers from a probe begun less than a second before (shared with /metrics, at most
    // one a second): the one of the round above would still stand for the moment after the hang.
    await sleep(1100);
    redis.hang();
    const first = await round();
    expectOutageAnswers(first);
    // Once the first commands timed out the connection is dropped: what follows fails fast.
    const later = await round();
    expectOutageAnswers(later);
    expect(Math.max(...Object.values(later).map((x) => x.ms))).toBeLessThan(2500);
    expect((t.services.redis as unknown as { offlineQueue: { length: number } }).offlineQueue.length).toBe(0);
  });

  it('while Redis is gone (SIGKILL), answers at once', async () => {
    await redis.kill();
    const r = await round();
    expectOutageAnswers(r);
    expect(Math.max(...Object.values(r).map((x) => x.ms))).toBeLessThan(1500);
  });

  it('recovers by itself when Redis is back, and every install and event accepted meanwhile reaches ClickHouse', async () => {
    await redis.restart();
    await eventually(
      () => t.request({ method: 'GET', url: '/healthz' }).then((res) => res.statusCode),
      (status) => status === 200,
      20_000,
    );
    const r = await round();
    expect(r.click.res.statusCode, r.click.res.body).toBe(200);
    expect(r.login.res.statusCode, r.login.res.body).toBe(200);
    expect(r.install.res.statusCode).toBe(201);

    const clickToken = r.click.res.json().click_token;
    expect(accepted.installs).toHaveLength(5);
    expect(accepted.events).toHaveLength(5);
    const count = async (table: string, column: string, ids: string[]) =>
      Number(
        (await t.services.warehouse.rows<{ n: string }>(`SELECT count() AS n FROM ${table} WHERE ${column} IN {ids:Array(String)}`, { ids }))[0]!.n,
      );
    await eventually(() => count('installs', 'install_id', accepted.installs), (n) => n === accepted.installs.length, 30_000);
    await eventually(() => count('ledger', 'transaction_id', accepted.events), (n) => n === accepted.events.length, 30_000);
    // The workers consume again: a click answered now is written too.
    await eventually(() => count('clicks', 'click_token', [clickToken]), (n) => n === 1, 30_000);
  }, 60_000);
});
