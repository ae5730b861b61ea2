import { addMoney, type Money, REFUNDS_SQL, REVENUE_SQL } from '../attribution/reporting/money';
import type { Warehouse } from '../warehouse/clickhouse';
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
export type Overview = DateRange & Totals & { previous: DateRange & Totals };

export async function overview(warehouse: Warehouse, brandId: string, range: DateRange): Promise<Overview> {
  const previous = previousRange(range);
  // Both ranges are read in one pass: rows from `start` on are current, earlier ones previous.
  const params = { brand: brandId, start: range.start_date, from: previous.start_date, to: range.end_date };
  const [counts, ledger] = await Promise.all([
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
  return { start_date: range.start_date, end_date: range.end_date, ...totals.current, previous: { ...previous, ...totals.previous } };
}

function emptyTotals(): Totals {
  return { clicks: 0, installs: 0, conversions: 0, revenue: {}, refunds: {} };
}
