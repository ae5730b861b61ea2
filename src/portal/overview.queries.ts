import { ledgerCounts } from '../attribution/reporting/counts';
import { addMoney, type Money, REFUNDS_SQL, REVENUE_SQL } from '../attribution/reporting/money';
import type { Warehouse } from '../warehouse/clickhouse';
import { addDays } from '../http/query';
import { type DateRange, previousRange } from './range';

/**
 * A brand's headline numbers, with one item per day, for a range and the range of equal length
 * before it, in one ClickHouse statement over both. Each number's definition: docs/api.md
 * ("Definitions"); sandbox rows never count.
 */
export type Totals = { clicks: number; bot_clicks: number; installs: number; installs_by_method: Record<string, number>; conversions: number; revenue: Money; refunds: Money };
/** One day of the chart; `revenue` per currency by the same rule as the totals. */
export type Day = { date: string; clicks: number; installs: number; conversions: number; revenue: Money };
export type Overview = DateRange & Totals & { daily: Day[]; previous: DateRange & Totals & { daily: Day[] } };

/**
 * A row of the overview statement: a fact's count on one day (`ledger`: per currency, `installs`:
 * per resolution method, both in `currency`), or
 * `ledger_total`, a range's ledger totals per currency (summed exactly, not from rounded days),
 * dated on the first day of its range.
 */
type DayRow = { fact: 'clicks' | 'bot_clicks' | 'installs' | 'ledger' | 'ledger_total'; date: string; currency: string; n: number; revenue: number | null; refunds: number | null };

/** Ledger rows that count: none superseded by a verified row (src/attribution/reporting/counts.ts). */
const COUNTS = ledgerCounts('brand_id = {brand:String}');

export async function overview(warehouse: Warehouse, brandId: string, range: DateRange): Promise<Overview> {
  const previous = previousRange(range);
  // Clicks are grouped by the projection's own keys (day, bot) so that ClickHouse reads the projection.
  const rows = await warehouse.rows<DayRow>(
    `SELECT if(bot = 1, 'bot_clicks', 'clicks') AS fact, toString(day) AS date, '' AS currency, n,
            CAST(NULL AS Nullable(Float64)) AS revenue, CAST(NULL AS Nullable(Float64)) AS refunds
     FROM (
       SELECT toDate(clicked_at) AS day, bot, count() AS n
       FROM clicks
       WHERE brand_id = {brand:String} AND toDate(clicked_at) BETWEEN {from:Date32} AND {to:Date32}
       GROUP BY day, bot
     )
     UNION ALL
     SELECT 'installs', toString(toDate(occurred_at)) AS date, toString(resolution_method), count(), NULL, NULL
     FROM installs FINAL
     WHERE brand_id = {brand:String} AND toDate(occurred_at) BETWEEN {from:Date32} AND {to:Date32}
     GROUP BY date, resolution_method
     UNION ALL
     SELECT 'ledger', toString(toDate(occurred_at)) AS date, currency, countIf(event_type != 'refund'), ${REVENUE_SQL}, NULL
     FROM ledger FINAL
     WHERE brand_id = {brand:String} AND sandbox = 0 AND toDate(occurred_at) BETWEEN {from:Date32} AND {to:Date32} AND ${COUNTS}
     GROUP BY date, currency
     UNION ALL
     SELECT 'ledger_total', if(toDate(occurred_at) >= {start:Date32}, {start:String}, {from:String}) AS date, currency,
            countIf(event_type != 'refund'), ${REVENUE_SQL}, ${REFUNDS_SQL}
     FROM ledger FINAL
     WHERE brand_id = {brand:String} AND sandbox = 0 AND toDate(occurred_at) BETWEEN {from:Date32} AND {to:Date32} AND ${COUNTS}
     GROUP BY date, currency
     ORDER BY currency`,
    { brand: brandId, start: range.start_date, from: previous.start_date, to: range.end_date },
  );
  const current = summarise(range, rows);
  return { ...range, ...current, previous: { ...previous, ...summarise(previous, rows) } };
}

/** The totals and the day series of `range` from the per-day rows of both ranges. */
function summarise(range: DateRange, rows: DayRow[]): Totals & { daily: Day[] } {
  const totals: Totals = { clicks: 0, bot_clicks: 0, installs: 0, installs_by_method: {}, conversions: 0, revenue: {}, refunds: {} };
  const days = new Map<string, Day>();
  for (const row of rows) {
    if (row.date < range.start_date || row.date > range.end_date) continue;
    const n = Number(row.n);
    if (row.fact === 'bot_clicks') {
      totals.bot_clicks += n;
      continue;
    }
    if (row.fact === 'ledger_total') {
      totals.conversions += n;
      addMoney(totals.revenue, row.currency, row.revenue);
      addMoney(totals.refunds, row.currency, row.refunds);
      continue;
    }
    const day = days.get(row.date) ?? { date: row.date, clicks: 0, installs: 0, conversions: 0, revenue: {} };
    days.set(row.date, day);
    if (row.fact === 'ledger') {
      day.conversions += n;
      addMoney(day.revenue, row.currency, row.revenue);
    } else {
      day[row.fact] += n;
      totals[row.fact] += n;
      if (row.fact === 'installs') totals.installs_by_method[row.currency] = (totals.installs_by_method[row.currency] ?? 0) + n;
    }
  }
  return { ...totals, daily: daySeries(range, days) };
}

/** One item per day of `range`, zero on days without facts. */
function daySeries(range: DateRange, days: Map<string, Day>): Day[] {
  const series: Day[] = [];
  for (let date = range.start_date; date <= range.end_date; date = addDays(date, 1)) {
    series.push(days.get(date) ?? { date, clicks: 0, installs: 0, conversions: 0, revenue: {} });
  }
  return series;
}
