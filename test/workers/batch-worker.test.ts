import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchWorker } from '../../workers/batch-worker';
import { createRedis } from '../../src/queues/redis';
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

/** Raw row count, without FINAL: a duplicate would show here. */
const rawCount = async (prefix: string) =>
  (
    await t.services.warehouse.rows<{ n: number }>('SELECT count() AS n FROM placements WHERE startsWith(placement_id, {p:String})', {
      p: `${prefix}-`,
    })
  )[0]!.n;

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
    const worker = new BatchWorker(
      {
        kind: 'placements',
        table: 'placements',
        maxWaitMs: 50,
        async afterInsert() {
          if (failures-- > 0) throw new Error('crash after insert');
        },
      },
      { warehouse: t.services.warehouse, db: t.services.db },
      connection,
      t.config.queuePrefix,
      t.services.log,
    );
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
});
