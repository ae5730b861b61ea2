import { z } from 'zod';
import { HttpError } from './errors';

/**
 * Query-string plumbing shared by the Data API and the portal (CONTRACT 5): parsing into
 * 400 invalid_parameter, periods and date ranges, and UTC calendar days.
 */

export const PERIODS = ['24h', '7d', '30d', '60d', '90d', '6m', 'ytd', 'all', 'custom'] as const;
export type Period = (typeof PERIODS)[number];

/** A calendar day ClickHouse's Date type holds. */
export const dayParam = z.iso
  .date('must be a date YYYY-MM-DD')
  .refine((d) => d >= '1970-01-01' && d <= '2149-06-06', 'must be between 1970-01-01 and 2149-06-06');

/** The query parameters naming a range of days; each API describes its own default period. */
export const rangeFields = (periodDescription: string) => ({
  start_date: dayParam.optional().describe('First day of the range (UTC), with end_date'),
  end_date: dayParam.optional().describe('Last day of the range (UTC), with start_date'),
  period: z.enum(PERIODS).optional().describe(periodDescription),
});

export const invalidParameter = (param: string, message: string) =>
  new HttpError(400, { error: 'invalid_parameter', param, message });

/** Validates a query string; the first problem becomes 400 invalid_parameter naming its parameter. */
export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  const parsed = schema.safeParse(query ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw invalidParameter(String(issue.path[0] ?? 'query'), issue.message);
}

/** The part of a query that names a range of days. */
export type RangeQuery = { period?: Period; start_date?: string; end_date?: string };

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
export function periodStart(period: Exclude<Period, 'all' | 'custom'>, today: string): string {
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
