import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { addPlacements, addSnapshots, api, brandWithKey, createCampaign, createCreator, parseCsv } from './helpers';

/** CSV exports neutralise text cells a spreadsheet would run as a formula; numbers and dates never change. */
let t: TestService;
let key: string;
let creatorId: string;
let campaignId: string;
const range = { start_date: '2026-04-01', end_date: '2026-04-03' };

beforeAll(async () => {
  t = await startTestService();
  const acme = await brandWithKey(t, { name: 'Acme' });
  key = acme.key;
  creatorId = (await createCreator(t, { name: '=HYPERLINK("https://evil.example","x")', handles: [{ platform: 'tiktok', handle: '@maya' }] })).id;
  campaignId = (await createCampaign(t, { brand_id: acme.brand.id, name: '-2+3 sale' })).id;
  await addPlacements(t, acme.brand.id, [
    { id: '+P1', campaign_id: campaignId, creator_id: creatorId, platform: 'tiktok', posted_at: '2026-04-01T10:00:00Z', caption: '@SUM(A1:A9)', url: 'https://tiktok.com/@maya/1' },
    { id: 'P2', campaign_id: campaignId, creator_id: null, platform: 'tiktok', posted_at: '2026-04-01T11:00:00Z', caption: '\tcmd|calc' },
    { id: 'P3', campaign_id: campaignId, creator_id: null, platform: 'tiktok', posted_at: '2026-04-01T12:00:00Z', caption: '\rcmd', thumbnail_url: 'https://cdn.example.com/=cmd.png' },
    { id: 'P4', campaign_id: campaignId, creator_id: null, platform: 'tiktok', posted_at: '2026-04-01T13:00:00Z', caption: 'fine = fine' },
  ]);
  // Views that fall (a platform removed some): the day's activity is negative.
  await addSnapshots(t, '+P1', [
    ['2026-04-01', 100, 10, 1, 2],
    ['2026-04-02', 90, 10, 1, 2],
  ]);
  await t.settle();
});
afterAll(async () => destroyTestService(t));

async function csv(path: string, query: Record<string, string>) {
  const res = await api(t, key, path, query);
  expect(res.statusCode, res.body).toBe(200);
  return parseCsv(res.body);
}

describe('CSV formula injection', () => {
  it("posts.csv: text cells starting with =, +, -, @, tab or CR get a leading '; others, numbers and dates do not", async () => {
    const rows = await csv('/posts.csv', range);
    const byId = new Map(rows.slice(1).map((r) => [r[0], r]));
    expect(byId.get("'+P1")).toEqual([
      "'+P1",
      'https://tiktok.com/@maya/1',
      'tiktok',
      "'@SUM(A1:A9)",
      '',
      '2026-04-01T10:00:00.000Z',
      campaignId,
      "'-2+3 sale",
      creatorId,
      `'=HYPERLINK("https://evil.example","x")`,
      "'@maya",
      '90',
      '10',
      '1',
      '2',
      String(13 / 90),
    ]);
    expect(byId.get('P2')![3]).toBe("'\tcmd|calc");
    // A stored URL is an absolute http(s) URL (docs/api.md), so it never starts with a formula character.
    expect(byId.get('P3')!.slice(3, 5)).toEqual(["'\rcmd", 'https://cdn.example.com/=cmd.png']);
    expect(byId.get('P4')![3]).toBe('fine = fine');
  });

  it("creators.csv: the name gets a leading '; JSON cells and numbers are unchanged", async () => {
    const rows = await csv('/creators.csv', range);
    const creator = rows.find((r) => r[0] === creatorId)!;
    expect(creator.slice(0, 6)).toEqual([creatorId, `'=HYPERLINK("https://evil.example","x")`, '[{"platform":"tiktok","handle":"@maya"}]', '["tiktok"]', '1', '90']);
  });

  it('daily.csv: a negative day stays a number', async () => {
    const rows = await csv('/metrics/daily.csv', { ...range, attribution: 'view_date' });
    expect(rows).toEqual([
      ['date', 'posts', 'views', 'likes', 'comments', 'shares'],
      ['2026-04-01', '1', '100', '10', '1', '2'],
      ['2026-04-02', '1', '-10', '0', '0', '0'],
      ['2026-04-03', '0', '0', '0', '0', '0'],
    ]);
  });
});
