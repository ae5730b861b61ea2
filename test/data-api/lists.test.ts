import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  creatorSchema,
  cursorPaginationSchema,
  pagePaginationSchema,
  pagedEnvelope,
  postSchema,
} from '../../src/data-api/resources';
import { DataQueries } from '../../src/data-api/queries';
import type { Platform } from '../../src/platforms';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import {
  addPlacements,
  addSnapshots,
  api,
  brandWithKey,
  createCampaign,
  createCreator,
  ok,
  parseCsv,
  seedAcme,
} from './helpers';

/** /posts, /creators and the three CSV exports (docs/api.md#answers), over seedAcme and a brand full of ties. */
let t: TestService;
let acme: Awaited<ReturnType<typeof seedAcme>>;
const range = { start_date: '2026-03-01', end_date: '2026-03-04' };
const posts = pagedEnvelope(postSchema.array(), cursorPaginationSchema);
const creators = pagedEnvelope(creatorSchema.array(), pagePaginationSchema);

beforeAll(async () => {
  t = await startTestService();
  acme = await seedAcme(t);
});
afterAll(async () => destroyTestService(t));

describe('GET /posts', () => {
  it('answers placements with campaign, creator (handle of the platform) and lifetime figures', async () => {
    const body = await ok(posts, t, acme.key, '/posts', range);
    expect(body.data.map((p) => p.id)).toEqual(['P4', 'P3', 'P2', 'P1']);
    expect(body.pagination).toEqual({ next_cursor: null, has_more: false });
    const [p4, p3, p2, p1] = body.data;
    expect(p1).toEqual({
      id: 'P1',
      url: 'https://tiktok.com/@maya/1',
      thumbnail_url: 'https://cdn.example.com/p1.jpg',
      caption: 'Spring drop, "limited", 20% off\nlink in bio',
      platform: 'tiktok',
      posted_at: '2026-03-01T10:00:00.000Z',
      campaign: { id: acme.spring, name: 'Spring' },
      creator: { id: acme.maya, name: 'Maya Lopez', handle: '@maya' },
      views: 300,
      likes: 25,
      comments: 3,
      shares: 6,
      engagement_rate: 34 / 300,
    });
    expect(p2).toMatchObject({ url: null, creator: { id: acme.ben, name: 'Ben', handle: 'BenTube' }, engagement_rate: 8 / 80 });
    expect(p3).toMatchObject({ creator: { handle: '@maya.ig' }, campaign: { name: 'Summer' }, shares: null, engagement_rate: 7 / 60 });
    expect(p4).toMatchObject({ creator: { id: null, name: null, handle: null }, views: 0, shares: 0, engagement_rate: 0 });
  });

  it('sorts by views and by engagement', async () => {
    const byViews = await ok(posts, t, acme.key, '/posts', { ...range, sort: 'views' });
    expect(byViews.data.map((p) => p.id)).toEqual(['P1', 'P2', 'P3', 'P4']);
    const byEngagement = await ok(posts, t, acme.key, '/posts', { ...range, sort: 'engagement' });
    expect(byEngagement.data.map((p) => p.id)).toEqual(['P3', 'P1', 'P2', 'P4']);
  });

  it('view_date lists placements with activity in the range, with that activity', async () => {
    const body = await ok(posts, t, acme.key, '/posts', {
      start_date: '2026-03-03',
      end_date: '2026-03-04',
      attribution: 'view_date',
      sort: 'views',
    });
    expect(body.data.map((p) => [p.id, p.views, p.likes, p.comments, p.shares])).toEqual([
      ['P1', 50, 5, 0, 1],
      ['P2', 30, 1, 1, 0],
      ['P3', 20, 1, 0, null],
    ]);
  });
});

describe('GET /creators', () => {
  it('answers creators by views with their totals, handles, platforms and followers', async () => {
    const body = await ok(creators, t, acme.key, '/creators', range);
    expect(body.data).toEqual([
      {
        id: acme.maya,
        name: 'Maya Lopez',
        handles: [
          { platform: 'tiktok', handle: '@maya' },
          { platform: 'instagram', handle: '@maya.ig' },
        ],
        platforms: ['instagram', 'tiktok'],
        posts: 2,
        views: 360,
        likes: 30,
        comments: 5,
        shares: 6,
        engagement_rate: 41 / 360,
        avg_views: 180,
        followers: 1000,
      },
      {
        id: acme.ben,
        name: 'Ben',
        handles: [{ platform: 'youtube', handle: 'BenTube' }],
        platforms: ['youtube'],
        posts: 1,
        views: 80,
        likes: 6,
        comments: 1,
        shares: 1,
        engagement_rate: 8 / 80,
        avg_views: 80,
        followers: null,
      },
      {
        id: null,
        name: 'Unknown creator',
        handles: [],
        platforms: ['tiktok'],
        posts: 1,
        views: 0,
        likes: 0,
        comments: 0,
        shares: 0,
        engagement_rate: 0,
        avg_views: 0,
        followers: null,
      },
    ]);
    expect(body.pagination).toEqual({ page: 1, page_size: 50, total: 3, total_pages: 1, has_more: false });
    // A handle is written platform first (platform, handle), whatever store its record is read from.
    const text = (await api(t, acme.key, '/creators', range)).body;
    expect(text).toContain('"handles":[{"platform":"tiktok","handle":"@maya"},{"platform":"instagram","handle":"@maya.ig"}]');
  });

  it('view_date totals are the activity in the range', async () => {
    const body = await ok(creators, t, acme.key, '/creators', {
      start_date: '2026-03-02',
      end_date: '2026-03-03',
      attribution: 'view_date',
    });
    expect(body.data.map((c) => [c.name, c.posts, c.views, c.likes, c.comments, c.shares, c.avg_views])).toEqual([
      ['Maya Lopez', 2, 210, 15, 4, 3, 105],
      ['Ben', 1, 30, 1, 1, 0, 30],
    ]);
    expect(body.data[0]!.engagement_rate).toBe(22 / 210);
    expect(body.pagination.total).toBe(2);
  });
});

describe('paging', () => {
  let key: string;
  // 23 placements sharing 3 posting instants and 4 view counts: ties everywhere.
  const expected = Array.from({ length: 23 }, (_, i) => {
    const views = (i % 4) * 10;
    return { id: `tie-${String(i).padStart(2, '0')}`, posted_at: `2026-04-0${1 + (i % 3)}T09:00:00.000Z`, views, likes: views / 10 };
  });
  type Expected = (typeof expected)[number];

  let tieBrand: { id: string; campaigns: string[] };
  beforeAll(async () => {
    const tie = await brandWithKey(t, { name: 'Ties' });
    key = tie.key;
    const campaign = await createCampaign(t, { brand_id: tie.brand.id, name: 'All' });
    await addPlacements(
      t,
      tie.brand.id,
      expected.map((p) => ({ id: p.id, campaign_id: campaign.id, creator_id: null, platform: 'tiktok', posted_at: p.posted_at })),
    );
    for (const p of expected) await addSnapshots(t, p.id, [['2026-04-05', p.views, p.likes, 0, null]]);
    // Seven creators, two pairs tied on views: the name decides.
    const names = ['Zed', 'Amy', 'Cleo', 'Bob', 'Dan', 'Eve', 'Fay'];
    const creatorViews = [100, 100, 50, 50, 50, 10, 0];
    const creatorCampaign = await createCampaign(t, { brand_id: tie.brand.id, name: 'Creators' });
    for (const [i, name] of names.entries()) {
      const creator = await createCreator(t, { name });
      await addPlacements(t, tie.brand.id, [
        { id: `cr-${i}`, campaign_id: creatorCampaign.id, creator_id: creator.id, platform: 'youtube', posted_at: '2026-04-01T00:00:00Z' },
      ]);
      await addSnapshots(t, `cr-${i}`, [['2026-04-02', creatorViews[i]!, 0, 0, 0]]);
    }
    await t.settle();
    tieBrand = { id: tie.brand.id, campaigns: [campaign.id, creatorCampaign.id] };
  });

  const withViews = (id: string) => expected.find((p) => p.id === id)!.views > 0;
  const sorted = (key: (p: Expected) => number) =>
    [...expected].sort((a, b) => key(b) - key(a) || (a.id < b.id ? -1 : 1)).map((p) => p.id);

  it.each([
    ['recent', 'upload_date', sorted((p) => Date.parse(p.posted_at))],
    ['views', 'upload_date', sorted((p) => p.views)],
    // view_date lists only placements with activity: the zero-view ones drop out
    ['engagement', 'view_date', sorted((p) => (p.views ? p.likes / p.views : 0)).filter(withViews)],
    ['views', 'view_date', sorted((p) => p.views).filter(withViews)],
  ])('/posts sort=%s (%s): following next_cursor visits every placement once, in order', async (sort, attribution, order) => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const query: Record<string, string> = { sort, attribution, limit: '4', platform: 'tiktok', start_date: '2026-04-01', end_date: '2026-04-05' };
      if (cursor) query.cursor = cursor;
      const body = await ok(posts, t, key, '/posts', query);
      seen.push(...body.data.map((p) => p.id));
      expect(body.pagination.has_more).toBe(body.pagination.next_cursor !== null);
      if (!body.pagination.has_more) break;
      expect(body.data).toHaveLength(4);
      cursor = body.pagination.next_cursor!;
    }
    expect(seen).toEqual(order);
  });

  it('a cursor of another sort is refused', async () => {
    const first = await ok(posts, t, key, '/posts', { sort: 'views', limit: '2' });
    const res = await api(t, key, '/posts', { sort: 'recent', cursor: first.pagination.next_cursor! });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_parameter', param: 'cursor' });
  });

  // A page reads the ranked totals, then names by id, and orders ties here: it must answer what the joined statement does.
  it('a creators page in two statements answers what one statement with the names joined does, page by page', async () => {
    const queries = new DataQueries(t.services.warehouse, t.services.db);
    for (const attribution of ['upload_date', 'view_date'] as const) {
      const scope = { brandId: tieBrand.id, start: '2026-04-01', end: '2026-04-05', platforms: ['youtube', 'tiktok'] as Platform[], campaignIds: tieBrand.campaigns, attribution };
      for (const limit of [1, 2, 3, 10]) {
        for (let page = 1; page <= Math.ceil(8 / limit) + 1; page++) {
          expect(await queries.creators(scope, page, limit), `${attribution} limit ${limit} page ${page}`).toEqual(await queries.creatorsJoined(scope, page, limit));
        }
      }
    }
  });

  it('/creators pages by views then name, with totals', async () => {
    const pages = [];
    for (let page = 1; page <= 4; page++) {
      pages.push(await ok(creators, t, key, '/creators', { platform: 'youtube', limit: '3', page: String(page) }));
    }
    expect(pages.map((p) => p.data.map((c) => c.name))).toEqual([['Amy', 'Zed', 'Bob'], ['Cleo', 'Dan', 'Eve'], ['Fay'], []]);
    expect(pages.map((p) => p.pagination)).toEqual([
      { page: 1, page_size: 3, total: 7, total_pages: 3, has_more: true },
      { page: 2, page_size: 3, total: 7, total_pages: 3, has_more: true },
      { page: 3, page_size: 3, total: 7, total_pages: 3, has_more: false },
      { page: 4, page_size: 3, total: 7, total_pages: 3, has_more: false },
    ]);
  });
});

describe('CSV exports', () => {
  const csv = async (path: string, query: Record<string, string>) => {
    const res = await api(t, acme.key, path, query);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    return { res, rows: parseCsv(res.body) };
  };

  it('posts.csv: the documented columns, quoted cells, nulls as empty cells', async () => {
    const { res, rows } = await csv('/posts.csv', range);
    expect(res.headers['content-disposition']).toBe('attachment; filename="posts_2026-03-01_2026-03-04.csv"');
    expect(rows[0]).toEqual([
      'id',
      'url',
      'platform',
      'caption',
      'thumbnail_url',
      'posted_at',
      'campaign_id',
      'campaign_name',
      'creator_id',
      'creator_name',
      'creator_handle',
      'views',
      'likes',
      'comments',
      'shares',
      'engagement_rate',
    ]);
    expect(rows.slice(1).map((r) => r[0])).toEqual(['P4', 'P3', 'P2', 'P1']);
    expect(rows[1]).toEqual(['P4', '', 'tiktok', '', '', '2026-03-03T00:00:00.000Z', acme.summer, 'Summer', '', '', '', '0', '0', '0', '0', '0']);
    expect(rows[2]![14]).toBe(''); // P3's null shares
    expect(rows[4]).toEqual([
      'P1',
      'https://tiktok.com/@maya/1',
      'tiktok',
      'Spring drop, "limited", 20% off\nlink in bio',
      'https://cdn.example.com/p1.jpg',
      '2026-03-01T10:00:00.000Z',
      acme.spring,
      'Spring',
      acme.maya,
      'Maya Lopez',
      "'@maya", // a text cell starting with @ is neutralised
      '300',
      '25',
      '3',
      '6',
      String(34 / 300),
    ]);
    expect(res.body).toContain('"Spring drop, ""limited"", 20% off\nlink in bio"');
    const byViews = await csv('/posts.csv', { ...range, sort: 'views' });
    expect(byViews.rows.slice(1).map((r) => r[0])).toEqual(['P1', 'P2', 'P3', 'P4']);
  });

  it('creators.csv: handles and platforms as JSON text cells', async () => {
    const { res, rows } = await csv('/creators.csv', range);
    expect(res.headers['content-disposition']).toBe('attachment; filename="creators_2026-03-01_2026-03-04.csv"');
    expect(rows).toEqual([
      ['id', 'name', 'handles', 'platforms', 'posts', 'views', 'likes', 'comments', 'shares', 'engagement_rate', 'avg_views', 'followers'],
      [
        acme.maya,
        'Maya Lopez',
        '[{"platform":"tiktok","handle":"@maya"},{"platform":"instagram","handle":"@maya.ig"}]',
        '["instagram","tiktok"]',
        '2',
        '360',
        '30',
        '5',
        '6',
        String(41 / 360),
        '180',
        '1000',
      ],
      [acme.ben, 'Ben', '[{"platform":"youtube","handle":"BenTube"}]', '["youtube"]', '1', '80', '6', '1', '1', '0.1', '80', ''],
      ['', 'Unknown creator', '[]', '["tiktok"]', '1', '0', '0', '0', '0', '0', '0', ''],
    ]);
    expect(res.body).toContain('"[{""platform"":""youtube"",""handle"":""BenTube""}]"');
    // JSON cells are quoted even when nothing in them needs it (docs/api.md#csv-columns).
    expect(res.body).toContain(',Unknown creator,"[]","[""tiktok""]",1,');
  });

  it('daily.csv: one row per day, cumulative on request, null shares empty', async () => {
    const { res, rows } = await csv('/metrics/daily.csv', { ...range, view_type: 'cumulative' });
    expect(res.headers['content-disposition']).toBe('attachment; filename="daily_2026-03-01_2026-03-04.csv"');
    expect(rows).toEqual([
      ['date', 'posts', 'views', 'likes', 'comments', 'shares'],
      ['2026-03-01', '2', '380', '31', '4', '7'],
      ['2026-03-02', '1', '440', '36', '6', ''],
      ['2026-03-03', '1', '440', '36', '6', '0'],
      ['2026-03-04', '0', '440', '36', '6', '0'],
    ]);
  });

  it('posts.csv reads on past its first page: each placement once, in order, ties included', async () => {
    const big = await brandWithKey(t, { name: 'Big' });
    const campaign = await createCampaign(t, { brand_id: big.brand.id, name: 'Bulk' });
    const ids = Array.from({ length: 1205 }, (_, i) => `bulk-${String(i).padStart(4, '0')}`);
    await addPlacements(
      t,
      big.brand.id,
      // nine posting instants for 1,205 placements
      ids.map((id, i) => ({ id, campaign_id: campaign.id, creator_id: null, platform: 'facebook', posted_at: `2026-06-0${1 + (i % 9)}T00:00:00Z` })),
    );
    await t.settle();
    const res = await api(t, big.key, '/posts.csv');
    const rows = parseCsv(res.body).slice(1);
    const expected = ids
      .map((id, i) => ({ id, day: 1 + (i % 9) }))
      .sort((a, b) => b.day - a.day || (a.id < b.id ? -1 : 1))
      .map((p) => p.id);
    expect(rows.map((r) => r[0])).toEqual(expected);
  });

  it('a CSV with nothing in range has its header row only', async () => {
    const { rows } = await csv('/posts.csv', { start_date: '2025-01-01', end_date: '2025-01-02' });
    expect(rows).toHaveLength(1);
  });
});
