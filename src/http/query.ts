import { z } from 'zod';
import { invalidParameter } from '../refusal';

/**
 * Query-string plumbing shared by the Data API and the portal (docs/api.md#semantics): parsing into
 * 400 invalid_parameter, periods and date ranges, and UTC calendar days.
 */

export const PERIODS = ['24h', '7d', '30d', '60d', '90d', '6m', 'ytd', 'all', 'custom'] as const;
export type Period = (typeof PERIODS)[number];

/** A calendar day, YYYY-MM-DD; one that has the form but is not in the calendar (2026-02-30) is said not to exist. */
export const dayParam = z.iso.date({ error: (issue) => dayMessage(issue.input) });

function dayMessage(input: unknown): string {
  const m = typeof input === 'string' ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(input) : null;
  if (!m) return 'must be a date YYYY-MM-DD';
  const [year, month] = [Number(m[1]), Number(m[2])];
  if (month < 1 || month > 12) return `${input} does not exist: there is no month ${m[2]}`;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return `${input} does not exist: ${year}-${m[2]} has ${days} days`;
}

/** The bounds of a range (docs/api.md): no day before 2000, none more than 366 days after today. */
export const FIRST_DAY = '2000-01-01';
export const MAX_DAYS_AHEAD = 366;

/** The query parameters naming a range of days; each API describes its own default period. */
export const rangeFields = (periodDescription: string) => ({
  start_date: dayParam.optional().describe('First day of the range (UTC), with end_date; 2000-01-01 or later'),
  end_date: dayParam.optional().describe('Last day of the range (UTC), with start_date; at most 366 days after today'),
  period: z.enum(PERIODS).optional().describe(periodDescription),
});


/** Validates a query string; the first problem becomes 400 invalid_parameter naming its parameter. */
export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  const parsed = schema.safeParse(query ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw invalidParameter(String(issue.path[0] ?? 'query'), issue.message);
}

/** The part of a query that names a range of days. */
export type RangeQuery = { period?: Period; start_date?: string; end_date?: string };

/** The inclusive range of UTC days a query names (docs/api.md), `period=all` starting on the day `since` gives. */
export async function resolveRange(q: RangeQuery, today: string, since: () => Promise<string | null>): Promise<{ start: string; end: string }> {
  if (q.start_date !== undefined || q.end_date !== undefined) {
    if (q.period !== undefined && q.period !== 'custom') {
      throw invalidParameter('period', `period=${q.period} cannot be combined with start_date and end_date`);
    }
    if (q.start_date === undefined) throw invalidParameter('start_date', 'start_date is required with end_date');
    if (q.end_date === undefined) throw invalidParameter('end_date', 'end_date is required with start_date');
    if (q.end_date < q.start_date) throw invalidParameter('end_date', 'end_date is before start_date');
    if (q.start_date < FIRST_DAY) throw invalidParameter('start_date', `must be ${FIRST_DAY} or later`);
    const last = addDays(today, MAX_DAYS_AHEAD);
    if (q.end_date > last) throw invalidParameter('end_date', `must be at most ${MAX_DAYS_AHEAD} days after today (${last} or earlier)`);
    return { start: q.start_date, end: q.end_date };
  }
  const period = q.period ?? 'all';
  if (period === 'custom') throw invalidParameter('start_date', 'period=custom requires start_date and end_date');
  if (period === 'all') {
    // A public event may carry any past time (1970): `all` never starts before FIRST_DAY.
    const first = await since();
    const start = first === null || first > today ? today : first < FIRST_DAY ? FIRST_DAY : first;
    return { start, end: today };
  }
  return { start: periodStart(period, today), end: today };
}

/** First day of a period that ends today (docs/api.md#semantics). */
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
