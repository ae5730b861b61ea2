import { expect } from 'vitest';
import type { z } from 'zod';
import {
  createApiKey,
  createBrand,
  createCampaign,
  createCreator,
  postPlacements,
  postSnapshots,
} from '../helpers/fixtures';
import type { TestService } from '../helpers/harness';

/** GET /api/v1<path> with the key as a Bearer token; `query` values are sent as given. */
export async function api(t: TestService, key: string | undefined, path: string, query: Record<string, string> = {}) {
  const qs = new URLSearchParams(query).toString();
  return t.request({
    method: 'GET',
    url: `/api/v1${path}${qs ? `?${qs}` : ''}`,
    headers: key === undefined ? {} : { authorization: `Bearer ${key}` },
  });
}

/** GET that must answer 200 with a body of the documented shape; returns it parsed. */
export async function ok<S extends z.ZodType>(
  schema: S,
  t: TestService,
  key: string,
  path: string,
  query: Record<string, string> = {},
): Promise<z.output<S>> {
  const res = await api(t, key, path, query);
  expect(res.statusCode, res.body).toBe(200);
  return schema.parse(res.json());
}

export type Placement = {
  id: string;
  campaign_id: string;
  creator_id: string | null;
  platform: string;
  posted_at: string;
  url?: string | null;
  caption?: string | null;
  thumbnail_url?: string | null;
};
export type Snapshot = [date: string, views: number, likes: number, comments: number, shares: number | null];

/** A brand with an API key, set up through the internal endpoints. */
export async function brandWithKey(t: TestService, body: Record<string, unknown> = { name: 'Acme' }) {
  const brand = await createBrand(t, body);
  const { key } = await createApiKey(t, brand.id);
  return { brand, key };
}

export async function addPlacements(t: TestService, brandId: string, placements: Placement[]) {
  await postPlacements(
    t,
    placements.map((p) => ({ brand_id: brandId, ...p })),
  );
}

export async function addSnapshots(t: TestService, placementId: string, snapshots: Snapshot[]) {
  await postSnapshots(
    t,
    snapshots.map(([date, views, likes, comments, shares]) => ({ placement_id: placementId, date, views, likes, comments, shares })),
  );
}

export { createCampaign, createCreator };

/** A CSV body as rows of cells (RFC 4180 quoting). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += ch;
  }
  if (cell !== '' || row.length) rows.push([...row, cell]);
  return rows;
}

/**
 * A small brand whose every number the tests compute by hand:
 *
 *   P1 Spring  Maya  tiktok     posted 03-01 10:00  snapshots 03-01 100/10/1/2, 03-02 250/20/3/5, 03-04 300/25/3/6
 *   P2 Spring  Ben   youtube    posted 03-01 12:00  snapshots 03-01 50/5/0/1,   03-03 80/6/1/1
 *   P3 Summer  Maya  instagram  posted 03-02 08:00  snapshots 03-02 40/4/2/-,   03-03 60/5/2/-   (shares null)
 *   P4 Summer  none  tiktok     posted 03-03 00:00  snapshot  03-03 0/0/0/0                      (no activity)
 *   PH Hidden  Maya  tiktok     posted 02-20        (campaign not visible: never counted)
 *
 * Daily activity (view_date), views/likes/comments/shares:
 *   03-01  P1 100/10/1/2  P2 50/5/0/1
 *   03-02  P1 150/10/2/3  P3 40/4/2/-
 *   03-03  P2 30/1/1/0    P3 20/1/0/-
 *   03-04  P1 50/5/0/1
 */
export async function seedAcme(t: TestService, prefix = '') {
  const { brand, key } = await brandWithKey(t, { name: 'Acme', logo_url: 'https://cdn.example.com/acme.png' });
  const campaign = (body: Record<string, unknown>) => createCampaign(t, { brand_id: brand.id, ...body });
  const spring = (await campaign({ name: 'Spring', start_date: '2026-03-01', end_date: '2026-03-31' })).id;
  const summer = (await campaign({ name: 'Summer', status: 'draft' })).id;
  const hidden = (await campaign({ name: 'Hidden', visible: false })).id;
  const maya = (
    await createCreator(t, {
      name: 'Maya Lopez',
      handles: [
        { platform: 'tiktok', handle: '@maya' },
        { platform: 'instagram', handle: '@maya.ig' },
      ],
      followers: 1000,
    })
  ).id;
  const ben = (await createCreator(t, { name: 'Ben', handles: [{ platform: 'youtube', handle: 'BenTube' }] })).id;
  const id = (name: string) => `${prefix}${name}`;
  await addPlacements(t, brand.id, [
    {
      id: id('P1'),
      campaign_id: spring,
      creator_id: maya,
      platform: 'tiktok',
      posted_at: '2026-03-01T10:00:00Z',
      url: 'https://tiktok.com/@maya/1',
      thumbnail_url: 'https://cdn.example.com/p1.jpg',
      caption: 'Spring drop, "limited", 20% off\nlink in bio',
    },
    { id: id('P2'), campaign_id: spring, creator_id: ben, platform: 'youtube', posted_at: '2026-03-01T12:00:00Z' },
    { id: id('P3'), campaign_id: summer, creator_id: maya, platform: 'instagram', posted_at: '2026-03-02T08:00:00Z' },
    { id: id('P4'), campaign_id: summer, creator_id: null, platform: 'tiktok', posted_at: '2026-03-03T00:00:00Z' },
    { id: id('PH'), campaign_id: hidden, creator_id: maya, platform: 'tiktok', posted_at: '2026-02-20T00:00:00Z' },
  ]);
  await addSnapshots(t, id('P1'), [
    ['2026-03-01', 100, 10, 1, 2],
    ['2026-03-02', 250, 20, 3, 5],
    ['2026-03-04', 300, 25, 3, 6],
  ]);
  await addSnapshots(t, id('P2'), [
    ['2026-03-01', 50, 5, 0, 1],
    ['2026-03-03', 80, 6, 1, 1],
  ]);
  await addSnapshots(t, id('P3'), [
    ['2026-03-02', 40, 4, 2, null],
    ['2026-03-03', 60, 5, 2, null],
  ]);
  await addSnapshots(t, id('P4'), [['2026-03-03', 0, 0, 0, 0]]);
  await addSnapshots(t, id('PH'), [
    ['2026-02-20', 1000, 100, 10, 10],
    ['2026-03-02', 2000, 200, 20, 20],
  ]);
  await t.settle();
  return { brandId: brand.id, key, spring, summer, hidden, maya, ben, id };
}
