import { z } from 'zod';
import { PLATFORMS, platformSchema } from '../platforms';
import { addDays } from '../http/query';
import { ATTRIBUTIONS, type Scope } from './params';
import type { CreatorRow, DailyTotals, PostRow } from './queries';

/**
 * The Data API's answers (docs/api.md#answers): zod schemas for /openapi.json and the tests,
 * and the functions that shape query rows into them. JSON and CSV share these functions.
 */

const dateString = z.iso.date();
const count = z.number().int();
const nullableCount = count.nullable();

export const campaignSchema = z.object({
  id: z.string(),
  name: z.string(),
  status: z.string(),
  start_date: dateString.nullable(),
  end_date: dateString.nullable(),
});

export const brandSchema = z.object({
  id: z.string(),
  name: z.string(),
  logo_url: z.string().nullable(),
  default_platforms: z.array(platformSchema),
  campaigns: z.array(campaignSchema).describe('Visible campaigns only'),
  metrics_since: dateString.nullable().describe('Posting day of the first placement in a visible campaign'),
});

export const summarySchema = z.object({
  posts: count,
  views: count,
  likes: count,
  comments: count,
  shares: nullableCount.describe('Null only when every counted placement has null shares'),
  engagement_rate: z.number().describe('(likes + comments + shares) / views, a fraction; 0 when views is 0'),
  creators: count.describe(
    'Distinct creators of the counted placements. Placements without a creator are not a creator here; /creators lists them as one "Unknown creator" row (id null), so it can hold one row more',
  ),
});

export const dailyRowSchema = z.object({
  date: dateString,
  posts: count,
  views: count,
  likes: count,
  comments: count,
  shares: nullableCount,
});

export const postSchema = z.object({
  id: z.string(),
  url: z.string().nullable(),
  thumbnail_url: z.string().nullable(),
  caption: z.string().nullable(),
  platform: platformSchema,
  posted_at: z.iso.datetime(),
  campaign: z.object({ id: z.string(), name: z.string() }),
  creator: z.object({ id: z.string().nullable(), name: z.string().nullable(), handle: z.string().nullable() }),
  views: count,
  likes: count,
  comments: count,
  shares: nullableCount,
  engagement_rate: z.number(),
});

export const creatorSchema = z.object({
  id: z.string().nullable().describe('Null for the placements without a creator'),
  name: z.string(),
  handles: z.array(z.object({ platform: platformSchema, handle: z.string() })),
  platforms: z.array(platformSchema),
  posts: count,
  views: count,
  likes: count,
  comments: count,
  shares: nullableCount,
  engagement_rate: z.number(),
  avg_views: z.number(),
  followers: nullableCount,
});

export const metaSchema = z.object({
  brand: z.object({ id: z.string(), name: z.string() }),
  start_date: dateString,
  end_date: dateString,
  platforms: z.array(platformSchema),
  attribution: z.enum(ATTRIBUTIONS),
  generated_at: z.iso.datetime(),
});

export type Meta = z.output<typeof metaSchema>;

/** The `meta` of every JSON answer: whose data, over which days, platforms and attribution. */
export function metaOf(brand: { id: string; name: string }, scope: Scope, { start, end }: { start: string; end: string }): Meta {
  const { platforms, attribution } = scope;
  return {
    brand: { id: brand.id, name: brand.name },
    start_date: start,
    end_date: end,
    platforms,
    attribution,
    generated_at: new Date().toISOString(),
  };
}

export const cursorPaginationSchema = z.object({ next_cursor: z.string().nullable(), has_more: z.boolean() });
export const pagePaginationSchema = z.object({
  page: count,
  page_size: count,
  total: count,
  total_pages: count,
  has_more: z.boolean(),
});

export const envelope = <D extends z.ZodType>(data: D) => z.object({ data, meta: metaSchema });
export const pagedEnvelope = <D extends z.ZodType, P extends z.ZodType>(data: D, pagination: P) =>
  envelope(data).extend({ pagination });

export const errorSchemas = {
  invalidParameter: z.object({ error: z.literal('invalid_parameter'), param: z.string(), message: z.string() }),
  unauthorized: z.object({ error: z.enum(['missing_api_key', 'invalid_api_key']) }),
};

export type Post = z.output<typeof postSchema>;
export type Creator = z.output<typeof creatorSchema>;
export type DailyRow = z.output<typeof dailyRowSchema>;

const byPlatformOrder = (a: string, b: string) =>
  PLATFORMS.indexOf(a as (typeof PLATFORMS)[number]) - PLATFORMS.indexOf(b as (typeof PLATFORMS)[number]);

export function toPost(row: PostRow, campaignNames: Map<string, string>): Post {
  const hasCreator = row.creator_id !== '';
  return {
    id: row.placement_id,
    url: row.url,
    thumbnail_url: row.thumbnail_url,
    caption: row.caption,
    platform: row.platform as Post['platform'],
    posted_at: row.posted_at,
    campaign: { id: row.campaign_id, name: campaignNames.get(row.campaign_id) ?? '' },
    creator: {
      id: hasCreator ? row.creator_id : null,
      name: hasCreator && row.creator_name !== '' ? row.creator_name : null,
      handle: row.creator_handle !== '' ? row.creator_handle : null,
    },
    views: row.views,
    likes: row.likes,
    comments: row.comments,
    shares: row.shares,
    engagement_rate: row.engagement_rate,
  };
}

export function toCreator(row: CreatorRow): Creator {
  return {
    id: row.creator_id === '' ? null : row.creator_id,
    name: row.name,
    handles: row.handles as Creator['handles'],
    platforms: [...row.platforms].sort(byPlatformOrder) as Creator['platforms'],
    posts: row.posts,
    views: row.views,
    likes: row.likes,
    comments: row.comments,
    shares: row.shares,
    engagement_rate: row.engagement_rate,
    avg_views: row.avg_views,
    followers: row.followers,
  };
}

/**
 * One row per day from start to end: days without counted placements are zeros. With
 * `cumulative`, views, likes and comments become running totals from the first day.
 */
export function dailyRows(totals: DailyTotals[], { start, end }: { start: string; end: string }, cumulative: boolean): DailyRow[] {
  const byDate = new Map(totals.map((t) => [t.date, t]));
  const rows: DailyRow[] = [];
  const running = { views: 0, likes: 0, comments: 0 };
  for (let date = start; date <= end; date = addDays(date, 1)) {
    const t = byDate.get(date);
    const row: DailyRow = {
      date,
      posts: t?.posts ?? 0,
      views: t?.views ?? 0,
      likes: t?.likes ?? 0,
      comments: t?.comments ?? 0,
      shares: t ? t.shares : 0,
    };
    if (cumulative) {
      running.views += row.views;
      running.likes += row.likes;
      running.comments += row.comments;
      Object.assign(row, running);
    }
    rows.push(row);
  }
  return rows;
}

/** CSV columns (docs/api.md#csv-columns) and how a resource fills them. */
export const csvColumns = {
  daily: ['date', 'posts', 'views', 'likes', 'comments', 'shares'],
  posts: [
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
  ],
  creators: [
    'id',
    'name',
    'handles',
    'platforms',
    'posts',
    'views',
    'likes',
    'comments',
    'shares',
    'engagement_rate',
    'avg_views',
    'followers',
  ],
} as const;

export const postCsvRecord = (p: Post) => [
  p.id,
  p.url,
  p.platform,
  p.caption,
  p.thumbnail_url,
  p.posted_at,
  p.campaign.id,
  p.campaign.name,
  p.creator.id,
  p.creator.name,
  p.creator.handle,
  p.views,
  p.likes,
  p.comments,
  p.shares,
  p.engagement_rate,
];

export const creatorCsvRecord = (c: Creator) => [
  c.id,
  c.name,
  c.handles,
  c.platforms,
  c.posts,
  c.views,
  c.likes,
  c.comments,
  c.shares,
  c.engagement_rate,
  c.avg_views,
  c.followers,
];

export const dailyCsvRecord = (d: DailyRow) => [d.date, d.posts, d.views, d.likes, d.comments, d.shares];
