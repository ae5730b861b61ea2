import { sql } from 'kysely';
import { type Job, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FactJobData } from '../../src/queues/facts';
import { createRedis } from '../../src/queues/redis';
import { OutboxSweeper } from '../../src/queues/outbox/sweeper';
import { OUTBOXES } from '../../workers/writers';
import { destroyTestService, eventually, sleep, startTestService, type TestService } from '../helpers/harness';
import { PrivateRedis } from '../helpers/private-redis';
import { type AttributionBrand, attributionBrand, click, postPublic, uniqueId } from './public/setup';
import { brandWithSession, connect, deliver, stripeSignature } from './webhooks/helpers';
import { overview } from '../../src/portal/overview.queries';
import { codeTotals } from '../../src/attribution/reporting/totals';
import { createCode } from '../helpers/attribution-fixtures';
import { createCreator } from '../helpers/fixtures';
import { todayUtc } from '../../src/http/query';

/**
 * Failure cases of docs/ingestion.md against real Redis, Postgres and chDB: every
 * accepted install and ledger event reaches ClickHouse exactly once. Redis losing its data
 * is a FLUSHALL, so this file runs on a redis-server of its own, never the tests' shared one.
 */
let redisServer: PrivateRedis;
let REDIS_URL: string;

let t: TestService;
let acme: AttributionBrand;
let sweeper: OutboxSweeper;
beforeAll(async () => {
  redisServer = await PrivateRedis.start();
  REDIS_URL = redisServer.url;
  t = await startTestService({ workers: false, env: { REDIS_URL } });
  acme = await attributionBrand(t, 'Acme');
  // Swept on demand, without a grace period, so each case runs in seconds.
  sweeper = new OutboxSweeper({ ...t.services, outboxes: OUTBOXES }, { graceMs: 0, resendAfterMs: 0 });
});
afterAll(async () => {
  await destroyTestService(t);
  await redisServer.kill();
});

/** The fact consumers only: the sweeps run on demand here, and no webhook is delivered. */
function runWorkers() {
  t.startWorkers({ sweeper: false, webhooks: undefined });
}

/** A ledger worker that writes its batch to ClickHouse and dies before it can acknowledge it (or mark the outbox). */
function doomedLedgerWorker() {
  const connection = createRedis(REDIS_URL, 'worker');
  let inserted = 0;
  const worker = new Worker<FactJobData>(
    'ledger',
    async (job: Job<FactJobData>) => {
      await t.services.warehouse.insert('ledger', job.data.rows, `doomed:${job.id}`);
      inserted += job.data.rows.length;
      await new Promise(() => {}); // killed here
    },
    { connection, prefix: t.config.queuePrefix, concurrency: 50 },
  );
  return {
    inserted: () => inserted,
    async kill() {
      await worker.close(true);
      await connection.quit();
    },
  };
}

/**
 * Time passes (simulated): the dead worker's locks expire and a stalled-job check is due, which
 * takes its jobs back; waits until the ledger queue's counts are `taken`.
 */
async function takeBackStalledJobs(taken: (counts: Record<string, number>) => boolean) {
  const queue = t.services.queues.queues.ledger;
  const key = (suffix: string) => `${t.config.queuePrefix}:ledger:${suffix}`;
  for (const job of await queue.getJobs(['active'])) await t.services.redis.del(key(`${job.id}:lock`));
  await t.services.redis.del(key('stalled-check'));
  const checker = new Worker('ledger', null, { connection: createRedis(REDIS_URL, 'worker'), prefix: t.config.queuePrefix, autorun: false, stalledInterval: 100 });
  void checker.startStalledCheckTimer();
  await eventually(() => queue.getJobCounts('active', 'wait'), taken);
  await checker.close();
}

async function postEvents(prefix: string, n: number) {
  for (let i = 0; i < n; i++) {
    const res = await postPublic(t, 'events', { pixel_key: acme.brand.pixel_key, transaction_id: `${prefix}-${i}`, amount: 10 });
    expect(res.json()).toEqual({ ok: true, duplicate: false });
  }
}

async function postInstalls(prefix: string, n: number) {
  for (let i = 0; i < n; i++) {
    const res = await postPublic(t, 'installs', { pixel_key: acme.brand.pixel_key, install_id: `${prefix}-${i}`, platform: 'ios' });
    expect(res.statusCode).toBe(201);
  }
}

/** Raw ClickHouse rows (no FINAL: a doubled row would count). */
const ledgerCount = async (prefix: string) =>
  (await t.services.warehouse.rows<{ n: number }>('SELECT count() AS n FROM ledger WHERE startsWith(transaction_id, {p:String})', { p: `${prefix}-` }))[0]!.n;
const installCount = async (prefix: string) =>
  (await t.services.warehouse.rows<{ n: number }>('SELECT count() AS n FROM installs WHERE startsWith(install_id, {p:String})', { p: `${prefix}-` }))[0]!.n;
const distinctLedger = async (prefix: string) =>
  (await t.services.warehouse.rows<{ n: number }>('SELECT uniqExact(id) AS n FROM ledger WHERE startsWith(transaction_id, {p:String})', { p: `${prefix}-` }))[0]!.n;

/** Facts of a prefix still pending in the outbox: ClickHouse has not confirmed them. */
const pending = (kind: 'installs' | 'ledger', table: 'installs' | 'ledger_events', key: 'install_id' | 'transaction_id') => async (prefix: string) =>
  (
    await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM fact_outbox o JOIN ${sql.table(table)} t ON t.id = o.id
      WHERE o.kind = ${kind} AND ${sql.ref(`t.${key}`)} LIKE ${`${prefix}-%`}`.execute(t.services.db)
  ).rows[0]!.n;
const unconfirmedEvents = pending('ledger', 'ledger_events', 'transaction_id');
const unconfirmedInstalls = pending('installs', 'installs', 'install_id');

/**
 * Runs `requests` while every queue add fails, as when the process dies before a job reaches
 * Redis or Redis refuses jobs: what they accept reaches Postgres and its outbox only.
 */
async function whileQueueFails<T>(reason: string, requests: () => Promise<T>): Promise<T> {
  const add = vi.spyOn(t.services.queues, 'add').mockRejectedValue(new Error(reason));
  try {
    return await requests();
  } finally {
    add.mockRestore();
  }
}

describe('ingestion durability', () => {
  it('crash between accepting and queueing: the sweeper writes the outbox row once', async () => {
    await t.stopWorkers();
    // The Postgres row is written, then the process "dies" before the job reaches Redis.
    await whileQueueFails('process died before enqueue', async () => {
      await postEvents('crash', 3);
      await postInstalls('crash', 2);
    });
    runWorkers();
    await t.settle();
    expect(await ledgerCount('crash')).toBe(0);

    expect(await sweeper.sweep()).toMatchObject({ requeued: 5 });
    await t.settle();
    expect(await ledgerCount('crash')).toBe(3);
    expect(await installCount('crash')).toBe(2);
    expect(await unconfirmedEvents('crash')).toBe(0);
    expect(await unconfirmedInstalls('crash')).toBe(0);
    // Confirmed rows are left alone by later sweeps.
    expect((await sweeper.sweep()).requeued).toBe(0);
  });

  it('a sweeper started after a crash sends at once what was recorded before it started, and leaves newer rows their grace', async () => {
    await t.stopWorkers();
    const restarted = await whileQueueFails('process died before enqueue', async () => {
      await postEvents('before-start', 2);
      // The process is started again: its sweeper has the default 10 s grace.
      const started = new OutboxSweeper({ ...t.services, outboxes: OUTBOXES });
      // Its start counts in whole milliseconds, rounded up: these rows come clearly after it.
      await sleep(5);
      await postEvents('after-start', 2);
      return started;
    });
    await restarted.sweep();
    runWorkers();
    await t.settle();
    expect(await ledgerCount('before-start')).toBe(2);
    expect(await unconfirmedEvents('before-start')).toBe(0);
    // Recorded after the start, and younger than the grace: left to their own (lost) job for now.
    expect(await ledgerCount('after-start')).toBe(0);
    expect(await unconfirmedEvents('after-start')).toBe(2);
    await sweeper.sweep();
    await t.settle();
    expect(await ledgerCount('after-start')).toBe(2);
  });

  it('a row recorded in the millisecond a sweeper starts, before its start, is sent at once', async () => {
    await t.stopWorkers();
    await whileQueueFails('process died before enqueue', () => postEvents('same-ms', 1));
    // Postgres keeps microseconds and Date.now() whole milliseconds: the sweeper starts in the row's own millisecond.
    const { rows } = await sql<{ ms: string }>`
      SELECT floor(extract(epoch FROM o.recorded_at) * 1000)::bigint::text AS ms
      FROM fact_outbox o JOIN ledger_events e ON e.id = o.id WHERE e.transaction_id = 'same-ms-0'`.execute(t.services.db);
    vi.useFakeTimers({ toFake: ['Date'], now: Number(rows[0]!.ms) });
    const restarted = new OutboxSweeper({ ...t.services, outboxes: OUTBOXES });
    vi.useRealTimers();
    await restarted.sweep();
    runWorkers();
    await t.settle();
    expect(await ledgerCount('same-ms')).toBe(1);
    expect(await unconfirmedEvents('same-ms')).toBe(0);
  });

  it('sweeper racing the original job: the fact is written once', async () => {
    await t.stopWorkers();
    await postEvents('race', 4);
    // The original jobs still wait in Redis when the sweeper queues the rows again.
    expect((await sweeper.sweep()).requeued).toBeGreaterThanOrEqual(4);
    runWorkers();
    await t.settle();
    expect(await ledgerCount('race')).toBe(4);
    expect(await unconfirmedEvents('race')).toBe(0);
  });

  it('Redis emptied with jobs in flight: installs and ledger rows are rebuilt from the outbox, none doubled', async () => {
    runWorkers();
    await postEvents('kept', 3); // written before the loss
    await postInstalls('kept', 2);
    await t.settle();
    await t.stopWorkers();
    await postEvents('lost', 5); // only in Redis when it loses its data
    await postInstalls('lost', 3);
    // Their background queue adds (which linger to gather rows) must have reached Redis.
    await t.services.queues.drain();
    expect((await t.services.queues.counts()).ledger.waiting).toBeGreaterThan(0);

    const redis = new Redis(REDIS_URL);
    try {
      expect(redis.options.port).toBe(redisServer.port); // this file's own server, never the shared one
      await redis.flushall();
    } finally {
      await redis.quit();
    }

    runWorkers();
    await t.settle();
    expect(await ledgerCount('lost')).toBe(0);
    await sweeper.sweep();
    await t.settle();
    expect(await ledgerCount('lost')).toBe(5);
    expect(await installCount('lost')).toBe(3);
    expect(await ledgerCount('kept')).toBe(3);
    expect(await installCount('kept')).toBe(2);
    expect(await unconfirmedEvents('lost')).toBe(0);
    expect(await unconfirmedInstalls('lost')).toBe(0);
  });

  it('worker killed after its ClickHouse insert, before acknowledging: the job taken back is not doubled', async () => {
    await t.stopWorkers();
    const doomed = doomedLedgerWorker();
    await postEvents('killed', 6);
    await eventually(async () => doomed.inserted(), (n) => n === 6);
    await doomed.kill();
    expect(await ledgerCount('killed')).toBe(6);

    await takeBackStalledJobs((c) => c.active === 0 && (c.wait ?? 0) > 0);
    runWorkers();
    await t.settle();
    expect(await ledgerCount('killed')).toBe(6);
    // The retried jobs found their rows written: nothing inserted again, but the rows are marked.
    expect(await unconfirmedEvents('killed')).toBe(0);
    expect(await sweeper.sweep()).toMatchObject({ requeued: 0 });
  });

  it('a verified row superseding a public one: every read counts exactly one of them, through a crash before the ClickHouse write and a replayed batch', async () => {
    runWorkers();
    const owner = await brandWithSession(t, 'Superseded');
    const creator = await createCreator(t, { name: 'Carl Claim', first_name: 'Carl' });
    const code = await createCode(t, { brand_id: owner.brandId, creator_id: creator.id, label: 'CARLDUR' });
    const secret = 'whsec_durability';
    const stripe = await connect(t, owner.cookie, { provider: 'stripe', signing_secret: secret });
    // What the portal and the internal lists read, straight from ClickHouse (no cached answer).
    const read = async () => {
      const { conversions, revenue } = await overview(t.services.warehouse, owner.brandId, { start_date: todayUtc(), end_date: todayUtc() });
      const byCode = (await codeTotals(t.services.warehouse, [{ id: code.id, brand_id: owner.brandId }])).get(code.id);
      return { conversions, revenue, code: byCode };
    };
    const claimed = { conversions: 1, revenue: { USD: 0.01 }, code: { conversions: 1, revenue: { USD: 0.01 } } };
    const verified = { conversions: 1, revenue: { USD: 2500 }, code: { conversions: 0, revenue: {} } };

    const pre = await postPublic(t, 'events', { pixel_key: owner.pixelKey, transaction_id: 'stripe:cs_dur', amount: 0.01, code: code.label });
    expect(pre.json()).toEqual({ ok: true, duplicate: false });
    await t.settle();
    expect(await read()).toEqual(claimed);

    // The webhook's row is accepted, then the process "dies" before its job reaches Redis.
    await t.stopWorkers();
    const body = JSON.stringify({
      id: 'evt_dur',
      type: 'checkout.session.completed',
      created: Math.floor(Date.now() / 1000),
      livemode: true,
      data: { object: { id: 'cs_dur', mode: 'payment', payment_status: 'paid', amount_total: 250_000, currency: 'usd' } },
    });
    const delivered = await whileQueueFails('process died before enqueue', () =>
      deliver(t, stripe.webhook_url, body, { 'stripe-signature': stripeSignature(body, [secret]) }),
    );
    expect(delivered).toEqual({ status: 200, body: { ok: true, recorded: 1, ignored: 0 } });
    // Postgres holds both rows, ClickHouse only the public one: it still counts, alone.
    expect(await read()).toEqual(claimed);

    // The sweeper sends it; a worker writes the batch and dies before acknowledging it.
    const doomed = doomedLedgerWorker();
    expect((await sweeper.sweep()).requeued).toBeGreaterThanOrEqual(1);
    await eventually(async () => doomed.inserted(), (n) => n >= 1);
    await doomed.kill();
    expect(await read()).toEqual(verified);

    // The batch is taken back and replayed: checked by id, nothing doubled, and the read is unchanged.
    await takeBackStalledJobs((c) => c.active === 0);
    runWorkers();
    await t.settle();
    expect(await sweeper.sweep()).toMatchObject({ requeued: 0 });
    const rows = await t.services.warehouse.rows<{ n: number }>("SELECT count() AS n FROM ledger WHERE transaction_id = 'stripe:cs_dur'");
    expect(Number(rows[0]!.n)).toBe(2);
    expect(await read()).toEqual(verified);
  });

  it('ClickHouse refusing inserts, then recovering: facts are written once when it is back', async () => {
    runWorkers();
    await t.services.warehouse.command('RENAME TABLE ledger TO ledger_away');
    try {
      await postEvents('outage', 5);
      await eventually(
        () => t.services.queues.queues.ledger.getJobs(['delayed', 'waiting', 'active']),
        (jobs) => jobs.some((j) => j.attemptsMade > 0),
      );
      // While ClickHouse is away the sweeper cannot tell what it has, so it queues nothing.
      const replay = vi.spyOn(t.services.queues, 'addReplay');
      await sweeper.sweep();
      expect(replay.mock.calls.filter(([kind]) => kind === 'ledger')).toEqual([]);
      replay.mockRestore();
    } finally {
      await t.services.warehouse.command('RENAME TABLE ledger_away TO ledger');
    }
    await t.settle(60_000);
    expect(await ledgerCount('outage')).toBe(5);
    expect(await distinctLedger('outage')).toBe(5);
    expect(await unconfirmedEvents('outage')).toBe(0);
  }, 90_000);

  it('clicks survive a worker restart: jobs wait in Redis and are written once', async () => {
    await t.stopWorkers();
    const tokens = [];
    for (let i = 0; i < 5; i++) tokens.push(await click(t, { domain: acme.hostname, slug: 'maya' }));
    await sleep(50);
    runWorkers();
    await t.settle();
    const rows = await t.services.warehouse.rows<{ n: number }>('SELECT count() AS n FROM clicks WHERE click_token IN {tokens:Array(String)}', { tokens });
    expect(rows[0]!.n).toBe(5);
  });

  it('accepts events while Redis refuses jobs, because the outbox keeps them', async () => {
    const tx = uniqueId('redis-down');
    await whileQueueFails('Redis unavailable', async () => {
      const res = await postPublic(t, 'events', { pixel_key: acme.brand.pixel_key, transaction_id: `${tx}-0`, amount: 1 });
      expect(res.json()).toEqual({ ok: true, duplicate: false });
      // Clicks have no outbox: refused rather than answered and lost.
      const clickRes = await postPublic(t, 'clicks', { domain: acme.hostname });
      expect(clickRes.statusCode).toBe(503);
      expect(clickRes.json()).toEqual({ error: 'unavailable' });
    });
    runWorkers();
    await sweeper.sweep();
    await t.settle();
    expect(await ledgerCount(tx)).toBe(1);
  });

  it('creators: a creator accepted while the queue fails reaches ClickHouse once, through the sweeper; a replay racing its job is not doubled', async () => {
    runWorkers();
    const name = uniqueId('Creator');
    const created = () =>
      t.request({ method: 'POST', url: '/api/internal/creators', admin: true, payload: { name, handles: [{ platform: 'tiktok', handle: '@c' }], followers: 7 } });
    const lost = await whileQueueFails('process died before enqueue', created);
    expect(lost.statusCode).toBe(201);
    await t.stopWorkers();
    const raced = await created(); // its job waits in Redis while the sweeper sends it again
    expect(raced.statusCode).toBe(201);
    await t.services.queues.drain();
    expect(await sweeper.sweep()).toMatchObject({ requeued: 2 });
    runWorkers();
    await t.settle();
    // Raw rows (no FINAL): one each, with the fields the Data API joins.
    const rows = await t.services.warehouse.rows<{ creator_id: string; name: string; handles: [string, string][]; followers: number }>(
      'SELECT creator_id, name, handles, followers FROM creators WHERE name = {name:String} ORDER BY creator_id',
      { name },
    );
    const ids = [lost.json().id, raced.json().id].sort();
    expect(rows.map((r) => r.creator_id)).toEqual(ids);
    expect(rows[0]).toMatchObject({ name, followers: 7 });
    const { rows: outbox } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM fact_outbox WHERE kind = 'creators' AND id = ANY(${ids}::text[])`.execute(t.services.db);
    expect(outbox[0]!.n).toBe(0);
    expect((await sweeper.sweep()).requeued).toBe(0);
  });

  it('facts left pending by a deleted brand leave the outbox without being queued', async () => {
    const gone = await attributionBrand(t, 'Gone');
    await t.settle(); // its creator reaches ClickHouse and leaves the outbox
    const tx = uniqueId('gone');
    await whileQueueFails('process died before enqueue', async () => {
      const res = await postPublic(t, 'events', { pixel_key: gone.brand.pixel_key, transaction_id: `${tx}-0`, amount: 1 });
      expect(res.json()).toEqual({ ok: true, duplicate: false });
    });
    const pendingIds = () => t.services.db.selectFrom('ledger_events').select('id').where('transaction_id', '=', `${tx}-0`).execute();
    const [recorded] = await pendingIds();
    // The brand's records go with it (ON DELETE CASCADE); its pending fact has no source left.
    await t.services.db.deleteFrom('brands').where('id', '=', gone.brand.id).execute();
    expect(await pendingIds()).toEqual([]);
    const orphaned = () => t.services.db.selectFrom('fact_outbox').select('id').where('id', '=', recorded!.id).execute();
    expect(await orphaned()).toHaveLength(1);
    const swept = await sweeper.sweep();
    expect(swept.requeued).toBe(0);
    expect(await orphaned()).toEqual([]);
  });
});
