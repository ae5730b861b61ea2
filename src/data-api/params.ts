import { z } from 'zod';
import { HttpError } from '../http/errors';
import { PLATFORMS, type Platform, platformSchema } from '../platforms';

/**
 * Request parameters of the Data API (SPEC 4.1, CONTRACT 5). These zod schemas both
 * validate requests and generate /openapi.json, so descriptions live here.
 */

export const PERIODS = ['24h', '7d', '30d', '60d', '90d', '6m', 'ytd', 'all', 'custom'] as const;
export const ATTRIBUTIONS = ['upload_date', 'view_date'] as const;
export const SORTS = ['recent', 'views', 'engagement'] as const;
export const VIEW_TYPES = ['incremental', 'cumulative'] as const;

export type Attribution = (typeof ATTRIBUTIONS)[number];
export type Sort = (typeof SORTS)[number];

/** A calendar day ClickHouse's Date type holds. */
const day = z.iso
  .date('must be a date YYYY-MM-DD')
  .refine((d) => d >= '1970-01-01' && d <= '2149-06-06', 'must be between 1970-01-01 and 2149-06-06');

/** A comma-separated list parsed into its items. */
const list = <T extends z.ZodType<string, string>>(item: T) =>
  z
    .string()
    .transform((s) => s.split(',').map((v) => v.trim()))
    .pipe(z.array(item).min(1));

const limit = z.coerce.number().int().min(1).max(100).default(50).describe('Rows per page, 1 to 100');

export const commonQuery = z.object({
  start_date: day.optional().describe('First day of the range (UTC), with end_date'),
  end_date: day.optional().describe('Last day of the range (UTC), with start_date'),
  period: z
    .enum(PERIODS)
    .optional()
    .describe('Range ending today (UTC); default all (from metrics_since). custom requires start_date and end_date'),
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
  // CONTRACT 10: a page beyond a million is out of range, not an empty answer after a huge OFFSET.
  page: z.coerce.number().int().min(1).max(MAX_PAGE).default(1).describe('Page number, from 1 to 1,000,000'),
  limit,
});

export type CommonQuery = z.output<typeof commonQuery>;

export const invalidParameter = (param: string, message: string) =>
  new HttpError(400, { error: 'invalid_parameter', param, message });

/** Validates a query string; the first problem becomes 400 invalid_parameter naming its parameter. */
export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  const parsed = schema.safeParse(query ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw invalidParameter(String(issue.path[0] ?? 'query'), issue.message);
}

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

/** The part of a query that names a range of days. */
export type RangeQuery = Pick<CommonQuery, 'period' | 'start_date' | 'end_date'>;

/** The inclusive range of UTC days a query names (CONTRACT 5), `period=all` starting on the day `since` gives. */
export async function resolveRange(q: RangeQuery, today: string, since: () => Promise<string | null>): Promise<{ start: string; end: string }> {
  if (q.start_date !== undefined || q.end_date !== undefined) {
    if (q.period !== undefined && q.period !== 'custom') {
      throw invalidParameter('period', `period=${q.period} cannot be combined with start_date and end_date`);
    }
    if (q.start_date === undefined) throw invalidParameter('start_date', 'start_date is required with end_date');
    if (q.end_date === undefined) throw invalidParameter('end_date', 'end_date is required with start_date');
    if (q.end_date < q.start_date) throw invalidParameter('end_date', 'end_date is before start_date');
    return { start: q.start_date, end: q.end_date };
  }
  const period = q.period ?? 'all';
  if (period === 'custom') throw invalidParameter('start_date', 'period=custom requires start_date and end_date');
  if (period === 'all') {
    const first = await since();
    return { start: first !== null && first < today ? first : today, end: today };
  }
  return { start: periodStart(period, today), end: today };
}

/** First day of a period that ends today (CONTRACT 5). */
export function periodStart(period: Exclude<(typeof PERIODS)[number], 'all' | 'custom'>, today: string): string {
  switch (period) {
    case '24h':
      return addDays(today, -1);
    case 'ytd':
      return `${today.slice(0, 4)}-01-01`;
    case '6m':
      return addMonths(addDays(today, 1), -6);
    default:
      // 7d, 30d, 60d, 90d: today and the n-1 days before
      return addDays(today, 1 - Number.parseInt(period, 10));
  }
}

export function todayUtc(now = new Date()): string {
  return now.toISOString().slice(0, 10);
}

export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** Calendar months; a day past the end of the target month becomes its last day (Aug 31 - 6 months = Feb 28). */
export function addMonths(date: string, months: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const index = y * 12 + (m - 1) + months;
  const year = Math.floor(index / 12);
  const month = index - year * 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return new Date(Date.UTC(year, month, Math.min(d, lastDay))).toISOString().slice(0, 10);
}
