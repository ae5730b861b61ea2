import { z } from 'zod';
import type { TotalsRange } from '../attribution/reporting/totals';
import { addDays, type Period, rangeFields, resolveRange, todayUtc } from '../http/query';
import type { Warehouse } from '../warehouse/clickhouse';

/**
 * The portal's reads over time take the Data API's period and dates (src/http/query.ts), with two
 * portal choices (docs/api.md#endpoints-apiclientattribution): `30d` by default, and `all` from the brand's first click (a person's),
 * install or ledger row (sandbox rows too, so the sandbox feed's `all` holds them).
 */

/** An inclusive range of UTC calendar days, YYYY-MM-DD. */
export type DateRange = { start_date: string; end_date: string };

export const rangeParams = z.object(
  rangeFields("Range ending today (UTC); default 30d; all starts at the brand's first fact. custom requires start_date and end_date"),
);
export type RangeParams = z.output<typeof rangeParams>;

export async function portalRange(warehouse: Warehouse, brandId: string, q: RangeParams, today = todayUtc()): Promise<DateRange & { period: Period }> {
  const dated = q.start_date !== undefined || q.end_date !== undefined;
  // The Data API's default is `all`: naming 30d when neither a period nor dates came makes it the portal's.
  const period = q.period ?? (dated ? 'custom' : '30d');
  const { start, end } = await resolveRange({ ...q, period: dated ? q.period : period }, today, () => firstFactDay(warehouse, brandId));
  return { period, start_date: start, end_date: end };
}

async function firstFactDay(warehouse: Warehouse, brandId: string): Promise<string | null> {
  const [row] = await warehouse.rows<{ first: string | null }>(
    `SELECT minOrNull(day) AS first FROM (
       SELECT minOrNull(day) AS day FROM (SELECT toDate(clicked_at) AS day FROM clicks WHERE brand_id = {brand:String} AND bot = 0 GROUP BY day)
       UNION ALL SELECT minOrNull(toDate(occurred_at)) FROM installs WHERE brand_id = {brand:String}
       UNION ALL SELECT minOrNull(toDate(occurred_at)) FROM ledger WHERE brand_id = {brand:String}
     )`,
    { brand: brandId },
  );
  return row?.first ?? null;
}

/** The range of equal length that ends the day before `range` starts. */
export function previousRange(range: DateRange): DateRange {
  const days = (Date.parse(range.end_date) - Date.parse(range.start_date)) / 86_400_000 + 1;
  const end = addDays(range.start_date, -1);
  return { start_date: addDays(end, 1 - days), end_date: end };
}

/** A range of days as the half-open timestamps the shared totals take. */
export function totalsRange(range: DateRange): TotalsRange {
  return { start: new Date(`${range.start_date}T00:00:00Z`), end: new Date(`${addDays(range.end_date, 1)}T00:00:00Z`) };
}
