import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chDateTime } from '../../src/warehouse/values';
import { splitStatements } from '../../src/warehouse/migrate';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

/** clickhouse/0020_portal_rollups.sql: the per-link daily click rollup stays exact. */
let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: false });
});
afterAll(async () => destroyTestService(t));

const click = (token: string, at: string, linkId = 1) => ({
  brand_id: 'brand-r',
  link_id: linkId,
  creator_id: 'c',
  click_token: token,
  clicked_at: chDateTime(new Date(at)),
  link_type: 'web',
});

async function rollup() {
  return t.services.warehouse.rows<{ day: string; link_id: number; clicks: number }>(
    `SELECT day, link_id, sum(clicks) AS clicks FROM clicks_daily WHERE brand_id = 'brand-r' GROUP BY day, link_id ORDER BY day, link_id`,
  );
}

describe('clicks_daily', () => {
  it('counts each click once per link and UTC day, and a replayed batch not at all', async () => {
    const batch = [click('svc_a', '2026-03-01T23:59:59Z'), click('svc_b', '2026-03-02T00:00:00Z'), click('svc_c', '2026-03-02T10:00:00Z', 2)];
    await t.services.warehouse.insert('clicks', batch, 'clicks:job-1');
    await t.services.warehouse.insert('clicks', batch, 'clicks:job-1'); // the worker retried the same jobs
    expect(await rollup()).toEqual([
      { day: '2026-03-01', link_id: 1, clicks: 1 },
      { day: '2026-03-02', link_id: 1, clicks: 1 },
      { day: '2026-03-02', link_id: 2, clicks: 1 },
    ]);
  });

  it('backfills clicks stored before the migration, and a second run adds nothing', async () => {
    const statements = splitStatements(await readFile(new URL('../../clickhouse/0020_portal_rollups.sql', import.meta.url), 'utf8'));
    await t.services.warehouse.command('TRUNCATE TABLE clicks_daily');
    for (const statement of statements) await t.services.warehouse.command(statement);
    for (const statement of statements) await t.services.warehouse.command(statement);
    expect((await rollup()).map((r) => r.clicks)).toEqual([1, 1, 1]);
  });
});
