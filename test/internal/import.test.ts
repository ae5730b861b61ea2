import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFile } from '../../src/internal/import';
import { createBrand, createCampaign, createCreator } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

let t: TestService;
let brandId: string;
let campaignId: string;
let creatorId: string;
const dir = mkdtempSync(join(tmpdir(), 'svc-import-'));

beforeAll(async () => {
  t = await startTestService();
  brandId = (await createBrand(t)).id;
  campaignId = (await createCampaign(t, { brand_id: brandId, name: 'Imported' })).id;
  creatorId = (await createCreator(t, { name: 'Ana' })).id;
});
afterAll(async () => destroyTestService(t));

const deps = () => ({ db: t.services.db, queues: t.services.queues });
const count = async (sql: string, params: Record<string, unknown>) => (await t.services.warehouse.rows<{ n: number }>(sql, params))[0]!.n;

describe('npm run cli -- import', () => {
  it('streams placements from NDJSON through the queues into ClickHouse', async () => {
    const lines = Array.from({ length: 25_000 }, (_, i) =>
      JSON.stringify({
        id: `nd-${i}`,
        brand_id: brandId,
        campaign_id: campaignId,
        creator_id: i % 2 ? creatorId : null,
        platform: 'tiktok',
        posted_at: '2026-03-01T10:00:00Z',
      }),
    );
    const file = join(dir, 'placements.ndjson');
    writeFileSync(file, `${lines.join('\n')}\n\n`);
    const report = await importFile(deps(), 'placements', file);
    expect(report).toEqual({ kind: 'placements', records: 25_000, queued: 25_000, refused: [] });
    await t.settle(60_000);
    expect(await count("SELECT count() AS n FROM placements FINAL WHERE brand_id = {b:String} AND startsWith(placement_id, 'nd-')", { b: brandId })).toBe(25_000);
  });

  it('reads CSV with a header row: empty cells are null, counts are numbers', async () => {
    const file = join(dir, 'snapshots.csv');
    writeFileSync(file, 'placement_id,date,views,likes,comments,shares\nnd-1,2026-03-01,100,10,1,\nnd-1,2026-03-02,"150",12,2,3\n');
    const report = await importFile(deps(), 'snapshots', file);
    expect(report).toEqual({ kind: 'snapshots', records: 2, queued: 2, refused: [] });
    await t.settle();
    const rows = await t.services.warehouse.rows(
      "SELECT toString(date) AS date, views, shares FROM placement_snapshots FINAL WHERE placement_id = 'nd-1' ORDER BY date",
    );
    expect(rows).toEqual([
      { date: '2026-03-01', views: 100, shares: null },
      { date: '2026-03-02', views: 150, shares: 3 },
    ]);
  });

  it('refuses a file with bad records by line and queues none of it', async () => {
    const good = { id: 'bad-file-1', brand_id: brandId, campaign_id: campaignId, creator_id: null, platform: 'youtube', posted_at: '2026-03-01T00:00:00Z' };
    const file = join(dir, 'bad.ndjson');
    writeFileSync(
      file,
      [
        JSON.stringify(good),
        '{not json',
        JSON.stringify({ ...good, id: 'bad-file-2', platform: 'myspace' }),
        JSON.stringify({ ...good, id: 'bad-file-3', campaign_id: 'ghost' }),
      ].join('\n'),
    );
    const report = await importFile(deps(), 'placements', file);
    expect(report.queued).toBe(0);
    expect(report.records).toBe(4);
    expect(report.refused.map((r) => r.line)).toEqual([2, 3, 4]);
    expect(report.refused[1]!.message).toMatch(/^platform: /);
    expect(report.refused[2]!.message).toBe('campaign_id: unknown campaign for this brand');
    await t.settle();
    expect(await count("SELECT count() AS n FROM placements WHERE startsWith(placement_id, 'bad-file-')", {})).toBe(0);
  });

  it('refuses an id named under two brands in chunks far apart (10,000 records a chunk), and queues none of the file', async () => {
    const other = (await createBrand(t, { name: 'Other' })).id;
    const otherCampaign = (await createCampaign(t, { brand_id: other, name: 'Theirs' })).id;
    const placement = (id: string, brand: string, campaign: string) =>
      JSON.stringify({ id, brand_id: brand, campaign_id: campaign, creator_id: null, platform: 'tiktok', posted_at: '2026-03-01T10:00:00Z' });
    const lines = [placement('apart-dup', brandId, campaignId)];
    for (let i = 0; i < 10_000; i++) lines.push(placement(`apart-${i}`, brandId, campaignId));
    lines.push(placement('apart-dup', other, otherCampaign));
    const file = join(dir, 'apart.ndjson');
    writeFileSync(file, lines.join('\n'));
    const report = await importFile(deps(), 'placements', file);
    expect(report).toMatchObject({ records: 10_002, queued: 0, refused: [{ line: 10_002, message: 'id: placement id named under another brand earlier in this file' }] });
  });

  it('answers a missing file with an error naming it, not a crash', async () => {
    await expect(importFile(deps(), 'snapshots', join(dir, 'nowhere.csv'))).rejects.toThrow(/ENOENT.*nowhere\.csv/);
    await expect(importFile(deps(), 'placements', join(dir, 'nowhere.ndjson'))).rejects.toThrow(/ENOENT/);
  });
});
