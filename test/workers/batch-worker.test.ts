import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { clickFact } from '../../src/attribution/clicks/fact';
import type { ServedLink } from '../../src/attribution/links/resolve';
import type { Redis } from 'ioredis';
import { BatchWorker } from '../../workers/batch-worker';
import type { FactWriter } from '../../workers/write';
import { FACT_WRITERS } from '../../workers/writers';
import { createLogger, type Logger } from '../../src/logger';
import { placementFact } from '../../src/placements/facts';
import { FactQueues } from '../../src/queues/queues';
import { createRedis, deleteKeysByPrefix } from '../../src/queues/redis';
import { PrivateRedis } from '../helpers/private-redis';
import { createBrand, createCampaign, postPlacements } from '../helpers/fixtures';
import { destroyTestService, eventually, startTestService, type TestService } from '../helpers/harness';

let t: TestService;
let brandId: string;
let campaignId: string;
beforeAll(async () => {
  t = await startTestService({ workers: false });
  brandId = (await createBrand(t)).id;
  campaignId = (await createCampaign(t, { brand_id: brandId, name: 'C' })).id;
});
afterAll(async () => destroyTestService(t));

const placements = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    id: `${prefix}-${i}`,
    brand_id: brandId,
    campaign_id: campaignId,
    creator_id: null,
    platform: 'tiktok',
    posted_at: '2026-06-01T00:00:00Z',
  }));

/** Raw count of placements whose id starts with `text`, without FINAL: a duplicate would show here. */
const placementsStartingWith = async (text: string) =>
  (await t.services.warehouse.rows<{ n: number }>('SELECT count() AS n FROM placements WHERE startsWith(placement_id, {p:String})', { p: text }))[0]!.n;
const rawCount = (prefix: string) => placementsStartingWith(`${prefix}-`);

/** A placements worker of the test's own on `connection`. */
const placementsWorker = (connection: Redis, writer: Partial<FactWriter>, log: Logger = t.services.log) =>
  new BatchWorker({ kind: 'placements', table: 'placements', ...writer }, { warehouse: t.services.warehouse, db: t.services.db }, connection, t.config.queuePrefix, log);

describe('batch workers', () => {
  it('keeps jobs in Redis while no worker runs and writes them when one starts', async () => {
    await postPlacements(t, placements('restart', 30));
    const counts = await t.services.queues.counts();
    expect(counts.placements.waiting).toBeGreaterThan(0);
    expect(await rawCount('restart')).toBe(0);
    t.startWorkers();
    await t.settle();
    expect(await rawCount('restart')).toBe(30);
  });

  it('writes the batch in hand before a graceful close returns', async () => {
    t.startWorkers();
    await postPlacements(t, placements('drain', 25));
    await eventually(
      () => t.services.queues.counts(),
      (c) => (c.placements.waiting ?? 0) === 0,
    );
    await t.stopWorkers();
    expect(await rawCount('drain')).toBe(25);
  });

  it('retries a batch while ClickHouse refuses the insert, then writes it once', async () => {
    await t.services.warehouse.command('RENAME TABLE placements TO placements_away');
    t.startWorkers();
    try {
      await postPlacements(t, placements('outage', 40));
      // Wait until at least one attempt has failed and been scheduled for retry.
      await eventually(
        () => t.services.queues.queues.placements.getJobs(['delayed', 'waiting', 'active']),
        (jobs) => jobs.some((j) => j.attemptsMade > 0),
      );
    } finally {
      await t.services.warehouse.command('RENAME TABLE placements_away TO placements');
    }
    await t.settle(30_000);
    expect(await rawCount('outage')).toBe(40);
    await t.stopWorkers();
  });

  it('drops a replayed batch: rows inserted but the job not acknowledged are not doubled', async () => {
    // A writer whose post-insert step fails once: the insert has landed, the job fails
    // and is retried, so the same batch is inserted again with the same token.
    let failures = 1;
    const connection = createRedis(t.config.redisUrl, 'worker');
    const worker = placementsWorker(connection, {
      maxWaitMs: 50,
      async afterInsert() {
        if (failures-- > 0) throw new Error('crash after insert');
      },
    });
    try {
      await postPlacements(t, placements('replay', 10));
      await t.settle(30_000);
      expect(failures).toBeLessThan(0);
      expect(await rawCount('replay')).toBe(10);
    } finally {
      await worker.close();
      await connection.quit();
    }
  });

  it('after Redis lost the jobs in hand, warns once with their count instead of an error per job', async () => {
    const lines: { level: number; msg: string; jobs?: number }[] = [];
    const log = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    // Waiting before the worker starts: it takes all three at once (jobs arriving one by one would wait in Redis for the batch's time).
    for (let job = 0; job < 3; job++) await postPlacements(t, placements(`vanished${job}`, 2));
    const connection = createRedis(t.config.redisUrl, 'worker');
    // Gathering for a minute: the jobs stay in hand until drain() writes them.
    const worker = placementsWorker(connection, { maxWaitMs: 60_000 }, log);
    try {
      await eventually(
        () => t.services.queues.counts(),
        (c) => c.placements.active === 3 && c.placements.waiting === 0,
      );
      // What FLUSHDB does to this queue.
      await deleteKeysByPrefix(t.services.redis, `${t.config.queuePrefix}:placements`);
      await worker.drain();
      const warnings = await eventually(
        async () => lines.filter((l) => l.msg.startsWith('jobs vanished from Redis')),
        (found) => found.length > 0,
      );
      await new Promise((r) => setTimeout(r, 1200)); // no second warning for the same loss
      expect(lines.filter((l) => l.msg.startsWith('jobs vanished from Redis'))).toEqual([expect.objectContaining({ level: 40, jobs: 3 })]);
      expect(warnings).toHaveLength(1);
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
      for (let job = 0; job < 3; job++) expect(await rawCount(`vanished${job}`)).toBe(2);
    } finally {
      await worker.close();
      await connection.quit();
    }
  });
  it('checks by id (in chunks) the jobs a rolled-back Redis gives again after a reconnect: clicks written before are not doubled', async () => {
    const connection = createRedis(t.config.redisUrl, 'worker');
    const clicks = FACT_WRITERS.find((w) => w.kind === 'clicks')!;
    const worker = new BatchWorker({ ...clicks, maxWaitMs: 50 }, { warehouse: t.services.warehouse, db: t.services.db }, connection, t.config.queuePrefix, t.services.log);
    const link: ServedLink = {
      id: 9001, brandId, brandName: 'Acme', brandLogoUrl: null, creatorId: 'creator-1', domain: 'rollback.test', slug: '',
      type: 'web', destinationUrl: 'https://acme.example/', iosUrl: null, androidUrl: null,
    };
    const rows = Array.from({ length: 1500 }, (_, n) =>
      clickFact(link, { token: `svc_rollback_${n}`, platform: 'ios', country: 'US', referrer: '', utm: { utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '' }, ipHash: '', bot: false }),
    );
    const queue = t.services.queues.queues.clicks;
    const written = async () =>
      (await t.services.warehouse.rows<{ n: number }>("SELECT count() AS n FROM clicks WHERE startsWith(click_token, 'svc_rollback_')"))[0]!.n;
    const completed = (jobId: string) => eventually(() => queue.getJobState(jobId), (state) => state === 'completed');
    try {
      // Past the check every worker start makes (jobs accepted before a start are checked too).
      if (connection.status !== 'ready') await new Promise((resolve) => connection.once('ready', resolve));
      await new Promise((r) => setTimeout(r, 5_500));
      const acceptedAt = Date.now();
      const first = await queue.add('clicks', { rows, acceptedAt }, { jobId: randomUUID() });
      await completed(first.id!);
      expect(await written()).toBe(1500);
      // Redis restarts from a snapshot taken before that job was written: the worker reconnects,
      // and the job comes back waiting, a first attempt, gathered with others (another batch token).
      await new Promise<void>((resolve) => {
        connection.once('ready', () => resolve());
        connection.disconnect(true);
      });
      const restored = await queue.add('clicks', { rows, acceptedAt }, { jobId: randomUUID() });
      await completed(restored.id!);
      expect(await written()).toBe(1500);
    } finally {
      await worker.close();
      await connection.quit();
    }
  });

  it('writes a full hand of waiting jobs at once instead of waiting out its gathering time', async () => {
    for (let job = 0; job < 19; job++) await postPlacements(t, placements(`hand${job}`, 1));
    const connection = createRedis(t.config.redisUrl, 'worker');
    // Gathering for a minute: before that only a full hand (8 jobs) is written.
    const worker = placementsWorker(connection, { maxWaitMs: 60_000, maxJobs: 8 });
    const written = () => placementsStartingWith('hand');
    try {
      expect(await eventually(written, (n) => n === 16)).toBe(16);
      const counts = await eventually(
        () => t.services.queues.counts(),
        (c) => c.placements.active === 3,
      );
      expect(counts.placements.waiting).toBe(0);
      await worker.drain();
      expect(await written()).toBe(19);
    } finally {
      await worker.close();
      await connection.quit();
    }
  });

  it('fetches jobs that arrive one by one in one burst once their batch is due, not each as it comes', async () => {
    // A Redis of the test's own: its command counts are this worker's and this queue's alone.
    const redis = await PrivateRedis.start();
    const producer = createRedis(redis.url, 'request');
    const connection = createRedis(redis.url, 'worker');
    const queues = new FactQueues(producer, t.config.queuePrefix);
    const worker = placementsWorker(connection, { maxWaitMs: 2_000 });
    const written = () => placementsStartingWith('trickle');
    /**
     * Redis's counts so far: BullMQ's blocking waits for a new job (BZPOPMIN), and its moves of a
     * job from waiting to active (RPOPLPUSH, inside its scripts), tried by every fetch and by every
     * completion that takes the next job in the same call.
     */
    const calls = async () => {
      const stats = await producer.info('commandstats');
      const count = (command: string) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
      return { waits: count('bzpopmin'), fetches: count('rpoplpush') };
    };
    try {
      // The worker started: it found the queue empty and waits for a job.
      const before = await eventually(
        () => calls().catch(() => ({ waits: 0, fetches: 0 })), // until the connection is up
        (c) => c.waits >= 1,
      );
      for (let job = 0; job < 10; job++) {
        await queues.add('placements', placements(`trickle${job}`, 1).map(placementFact));
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await eventually(written, (n) => n === 10)).toBe(10);
      await eventually(
        () => queues.counts(),
        (c) => c.placements.waiting === 0 && c.placements.active === 0,
      );
      const after = await calls();
      // Fetched as each came (before), it was a wait, a fetch and a fetch finding nothing per job:
      // 20 waits and 41 moves. In a burst: the first job, then the other nine once the batch is due;
      // with the ten completions' moves, 24.
      expect(after.waits - before.waits).toBeLessThanOrEqual(5);
      expect(after.fetches - before.fetches).toBeLessThanOrEqual(28);
      expect(await written()).toBe(10);
    } finally {
      await worker.close();
      await Promise.all([connection.quit(), producer.quit()]);
      await redis.kill();
    }
  });

  it('closes while a fetch waits for the batch in hand: writes that batch and takes no job after close began', async () => {
    const connection = createRedis(t.config.redisUrl, 'worker');
    const worker = placementsWorker(connection, { maxWaitMs: 60_000 });
    const queue = t.services.queues.queues.placements;
    let closed = false;
    try {
      await postPlacements(t, placements('gated0', 2));
      await eventually(() => t.services.queues.counts(), (c) => c.placements.active === 1 && c.placements.waiting === 0);
      // The next job wakes the worker's wait; its fetch waits for the batch in hand (due in a minute).
      await postPlacements(t, placements('gated1', 2));
      await new Promise((r) => setTimeout(r, 300));
      expect((await t.services.queues.counts()).placements).toMatchObject({ active: 1, waiting: 1 });
      const started = Date.now();
      await worker.close();
      closed = true;
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await rawCount('gated0')).toBe(2);
      expect(await rawCount('gated1')).toBe(0);
      expect(await queue.getWaitingCount()).toBe(1);
    } finally {
      if (!closed) await worker.close();
      await connection.quit();
      await queue.drain(); // the job left waiting
    }
  });
});
