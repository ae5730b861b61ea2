import { addMoney, type Money, REFUNDS_SQL, REVENUE_SQL } from '../attribution/reporting/money';
import type { Warehouse } from '../warehouse/clickhouse';
import { addDays } from '../data-api/params';
import { type DateRange, previousRange } from './range';

/**
 * A brand's headline numbers for a range and for the range of equal length before it, in
 * two ClickHouse queries over both ranges at once (definitions in the README):
 *
 * - clicks: clicks in range, from the per-day rollup `clicks_daily` (clickhouse/0020);
 * - installs: installs that occurred in range (deduplicated by id: FINAL);
 * - conversions: live ledger rows that are not refunds;
 * - revenue: per currency, the sum of live rows, refunds (stored negative) included;
 * - refunds: per currency, the refunded amounts as positive numbers.
 *
 * Sandbox rows never count. Which currencies show: src/attribution/reporting/money.ts, the
 * rule the per-link and per-code totals follow too.
 */
export type Totals = { clicks: number; installs: number; conversions: number; revenue: Money; refunds: Money };
/** One day of the chart; `revenue` per currency by the same rule as the totals. */
export type Day = { date: string; clicks: number; installs: number; conversions: number; revenue: Money };
export type Overview = DateRange & Totals & { daily: Day[]; previous: DateRange & Totals & { daily: Day[] } };

export async function overview(warehouse: Warehouse, brandId: string, range: DateRange): Promise<Overview> {
  const previous = previousRange(range);
  // Both ranges are read in one pass: rows from `start` on are current, earlier ones previous.
  const params = { brand: brandId, start: range.start_date, from: previous.start_date, to: range.end_date };
  const [counts, ledger, days] = await Promise.all([
    warehouse.rows<{ fact: 'clicks' | 'installs'; current: number; previous: number }>(
      `SELECT 'clicks' AS fact, sumIf(clicks, day >= {start:Date32}) AS current, sumIf(clicks, day < {start:Date32}) AS previous
       FROM clicks_daily
       WHERE brand_id = {brand:String} AND day BETWEEN {from:Date32} AND {to:Date32}
       UNION ALL
       SELECT 'installs', countIf(toDate(occurred_at) >= {start:Date32}), countIf(toDate(occurred_at) < {start:Date32})
       FROM installs FINAL
       WHERE brand_id = {brand:String} AND toDate(occurred_at) BETWEEN {from:Date32} AND {to:Date32}`,
      params,
    ),
    warehouse.rows<{ currency: string; current: number; conversions: number; revenue: number | null; refunds: number | null }>(
      `SELECT currency, toDate(occurred_at) >= {start:Date32} AS current,
              countIf(event_type != 'refund') AS conversions,
              ${REVENUE_SQL} AS revenue,
              ${REFUNDS_SQL} AS refunds
       FROM ledger FINAL
       WHERE brand_id = {brand:String} AND sandbox = 0 AND toDate(occurred_at) BETWEEN {from:Date32} AND {to:Date32}
       GROUP BY currency, current
       ORDER BY currency`,
      params,
    ),
    dailyFacts(warehouse, params),
  ]);

  const totals = { current: emptyTotals(), previous: emptyTotals() };
  for (const row of counts) {
    totals.current[row.fact] = Number(row.current);
    totals.previous[row.fact] = Number(row.previous);
  }
  for (const row of ledger) {
    const t = Number(row.current) ? totals.current : totals.previous;
    t.conversions += Number(row.conversions);
    addMoney(t.revenue, row.currency, row.revenue);
    addMoney(t.refunds, row.currency, row.refunds);
  }
  return {
    start_date: range.start_date,
    end_date: range.end_date,
    ...totals.current,
    daily: daySeries(range, days),
    previous: { ...previous, ...totals.previous, daily: daySeries(previous, days) },
  };
}

/**
 * The chart's numbers per day over both ranges, in one statement over the same tables as
 * the totals: clicks from the rollup, installs and the ledger per day (and currency).
 */
async function dailyFacts(warehouse: Warehouse, params: { brand: string; from: string; to: string }): Promise<Map<string, Day>> {
  const rows = await warehouse.rows<{ fact: 'clicks' | 'installs' | 'ledger'; date: string; currency: string; n: number; revenue: number | null }>(
    `SELECT 'clicks' AS fact, toString(day) AS date, '' AS currency, sum(clicks) AS n, CAST(NULL AS Nullable(Float64)) AS revenue
     FROM clicks_daily
     WHERE brand_id = {brand:String} AND day BETWEEN {from:Date32} AND {to:Date32}
     GROUP BY day
     UNION ALL
     SELECT 'installs', toString(toDate(occurred_at)) AS date, '', count(), NULL
     FROM installs FINAL
     WHERE brand_id = {brand:String} AND toDate(occurred_at) BETWEEN {from:Date32} AND {to:Date32}
     GROUP BY date
     UNION ALL
     SELECT 'ledger', toString(toDate(occurred_at)) AS date, currency, countIf(event_type != 'refund'), ${REVENUE_SQL}
     FROM ledger FINAL
     WHERE brand_id = {brand:String} AND sandbox = 0 AND toDate(occurred_at) BETWEEN {from:Date32} AND {to:Date32}
     GROUP BY date, currency`,
    params,
  );
  const days = new Map<string, Day>();
  for (const row of rows) {
    const day = days.get(row.date) ?? { date: row.date, clicks: 0, installs: 0, conversions: 0, revenue: {} };
    days.set(row.date, day);
    if (row.fact === 'ledger') {
      day.conversions += Number(row.n);
      addMoney(day.revenue, row.currency, row.revenue);
    } else day[row.fact] += Number(row.n);
  }
  return days;
}

/** One item per day of `range`, zero on days without facts. */
function daySeries(range: DateRange, days: Map<string, Day>): Day[] {
  const series: Day[] = [];
  for (let date = range.start_date; date <= range.end_date; date = addDays(date, 1)) {
    series.push(days.get(date) ?? { date, clicks: 0, installs: 0, conversions: 0, revenue: {} });
  }
  return series;
}

function emptyTotals(): Totals {
  return { clicks: 0, installs: 0, conversions: 0, revenue: {}, refunds: {} };
}
