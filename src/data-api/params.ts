import { z } from 'zod';
import { rangeFields, resolveRange } from '../http/query';
import { invalidParameter } from '../refusal';
import { integerParam } from '../integer-param';
import { PLATFORMS, type Platform, platformSchema } from '../platforms';

/**
 * Request parameters of the Data API (docs/api.md#data-api). These zod schemas both
 * validate requests and generate /openapi.json, so descriptions live here.
 */

export const ATTRIBUTIONS = ['upload_date', 'view_date'] as const;
export const SORTS = ['recent', 'views', 'engagement'] as const;
export const VIEW_TYPES = ['incremental', 'cumulative'] as const;

export type Attribution = (typeof ATTRIBUTIONS)[number];
export type Sort = (typeof SORTS)[number];

/** A comma-separated list parsed into its items. */
const list = <T extends z.ZodType<string, string>>(item: T) =>
  z
    .string()
    .transform((s) => s.split(',').map((v) => v.trim()))
    .pipe(z.array(item).min(1));

const limit = integerParam(z.coerce.number().int().min(1).max(100).default(50)).describe('Rows per page, 1 to 100');

export const commonQuery = z.object({
  ...rangeFields('Range ending today (UTC); default all (from metrics_since). custom requires start_date and end_date'),
  platform: list(platformSchema)
    .optional()
    .describe(`Comma-separated platforms (${PLATFORMS.join(', ')}); default: the brand's default platforms`),
  attribution: z
    .enum(ATTRIBUTIONS)
    .default('upload_date')
    .describe('upload_date counts a placement with its lifetime totals on its posting day; view_date counts activity on the day it happened'),
  campaign_id: list(z.string().min(1))
    .optional()
    .describe('Comma-separated campaign IDs from /brand; default: every visible campaign'),
  api_key: z.string().optional().describe('API key, for tools that cannot send a header (discouraged)'),
});

export const dailyQuery = commonQuery.extend({
  view_type: z
    .enum(VIEW_TYPES)
    .default('incremental')
    .describe('cumulative turns views, likes and comments into running totals from the first day of the range'),
});

const sort = z.enum(SORTS).default('recent').describe('recent (posted_at), views or engagement, all descending');

export const postsQuery = commonQuery.extend({
  sort,
  limit,
  cursor: z.string().min(1).optional().describe('pagination.next_cursor of the previous page'),
});

export const postsCsvQuery = commonQuery.extend({ sort });

const MAX_PAGE = 1_000_000;

export const creatorsQuery = commonQuery.extend({
  // A page beyond a million is out of range, not an empty answer after a huge OFFSET.
  page: integerParam(z.coerce.number().int().min(1).max(MAX_PAGE).default(1)).describe('Page number, from 1 to 1,000,000'),
  limit,
});

export type CommonQuery = z.output<typeof commonQuery>;

/** The brand-side facts a request's scope is resolved against. */
export type ScopeContext = {
  brandId: string;
  defaultPlatforms: string[];
  visibleCampaignIds: string[];
  today: string;
  /** The brand's first posting day (visible campaigns), for period=all. */
  metricsSince(): Promise<string | null>;
};

/** What every answer is scoped to: a brand, an inclusive range of UTC days and filters. */
export type Scope = {
  brandId: string;
  start: string;
  end: string;
  platforms: Platform[];
  campaignIds: string[];
  attribution: Attribution;
};

export async function resolveScope(q: CommonQuery, ctx: ScopeContext): Promise<Scope> {
  const { start, end } = await resolveRange(q, ctx.today, ctx.metricsSince);
  const requested = q.platform ?? ctx.defaultPlatforms;
  const platforms = PLATFORMS.filter((p) => requested.includes(p));
  let campaignIds = ctx.visibleCampaignIds;
  if (q.campaign_id) {
    const unknown = q.campaign_id.find((id) => !ctx.visibleCampaignIds.includes(id));
    if (unknown !== undefined) throw invalidParameter('campaign_id', `unknown campaign: ${unknown}`);
    campaignIds = [...new Set(q.campaign_id)];
  }
  return { brandId: ctx.brandId, start, end, platforms, campaignIds, attribution: q.attribution };
}
