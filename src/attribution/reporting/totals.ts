import type { Warehouse } from '../../warehouse/clickhouse';
import { chDateTime } from '../../warehouse/values';
import { ledgerCounts } from './counts';
import { addMoney, type Money, REVENUE_SQL } from './money';

export type { Money };

/**
 * Attribution totals of one list page, bounded to its ids and their brands, in ONE ClickHouse
 * statement (each costs 6 to 10 ms embedded, whatever its size). What each total counts:
 * docs/api.md ("Totals"); how it is read fast: docs/reads.md.
 */

export type CodeTotals = { conversions: number; revenue: Money };
export type LinkTotals = CodeTotals & { clicks: number; bot_clicks: number; installs: number };

/**
 * When the facts happened: clicked_at, or occurred_at for installs and ledger rows; [start, end).
 * Whole UTC days (midnight bounds): clicks are counted per day (the projection's grain).
 */
export type TotalsRange = { start: Date; end: Date };

export async function linkTotals(
  warehouse: Warehouse,
  links: readonly { id: number; brand_id: string }[],
  range?: TotalsRange,
): Promise<Map<number, LinkTotals>> {
  const totals = new Map(links.map((l): [number, LinkTotals] => [l.id, { clicks: 0, bot_clicks: 0, installs: 0, conversions: 0, revenue: {} }]));
  if (links.length === 0) return totals;
  const rows = await warehouse.rows<TotalsRow>(
    `SELECT * FROM (
       SELECT if(bot = 1, 'bot_clicks', 'clicks') AS kind, toString(link_id) AS id, '' AS currency, n, NULL AS revenue
       FROM (
         SELECT link_id, bot, count() AS n
         FROM clicks
         WHERE brand_id IN {brands:Array(String)} AND link_id IN {ids:Array(UInt64)} ${within('day', range)}
         GROUP BY link_id, bot
       )
       UNION ALL
       SELECT 'installs', toString(assumeNotNull(link_id)), '', count(), NULL
       FROM installs FINAL
       WHERE brand_id IN {brands:Array(String)} AND link_id IN {ids:Array(UInt64)} ${within('occurred_at', range)}
       GROUP BY link_id
       UNION ALL
       ${ledgerSelect('link_id', range)}
     )
     ORDER BY currency`,
    { ...bounds(links.map((l) => l.brand_id), range), ids: links.map((l) => l.id) },
  );
  for (const row of rows) add(totals.get(Number(row.id)), row);
  return totals;
}

export async function codeTotals(
  warehouse: Warehouse,
  codes: readonly { id: string; brand_id: string }[],
  range?: TotalsRange,
): Promise<Map<string, CodeTotals>> {
  const totals = new Map(codes.map((c): [string, CodeTotals] => [c.id, { conversions: 0, revenue: {} }]));
  if (codes.length === 0) return totals;
  const rows = await warehouse.rows<TotalsRow>(`${ledgerSelect('code_id', range)} ORDER BY currency`, {
    ...bounds(codes.map((c) => c.brand_id), range),
    ids: codes.map((c) => c.id),
  });
  for (const row of rows) add(totals.get(row.id), row);
  return totals;
}

/**
 * A row of the totals statement: `n` is the count of the total `kind` names for one link
 * or code (id as text); ledger rows (`conversions`) come one per currency, with its revenue,
 * ordered by currency so that `revenue` lists its currencies alphabetically.
 */
type TotalsRow = { kind: 'clicks' | 'bot_clicks' | 'installs' | 'conversions'; id: string; currency: string; n: number; revenue: number | null };

/** Adds up: a link's conversions come in one row per currency. */
function add(totals: (CodeTotals & Partial<LinkTotals>) | undefined, row: TotalsRow): void {
  if (!totals) return;
  totals[row.kind] = (totals[row.kind] ?? 0) + Number(row.n);
  if (row.kind === 'conversions') addMoney(totals.revenue, row.currency, row.revenue);
}

const ID_TYPE = { link_id: 'UInt64', code_id: 'String' } as const;

/** Conversions and revenue per link or code id and currency, as TotalsRow. */
function ledgerSelect(column: keyof typeof ID_TYPE, range: TotalsRange | undefined): string {
  return `SELECT 'conversions' AS kind, toString(assumeNotNull(${column})) AS id, currency,
            countIf(event_type != 'refund') AS n, ${REVENUE_SQL} AS revenue
     FROM ledger FINAL
     WHERE sandbox = 0 AND brand_id IN {brands:Array(String)} AND ${column} IN {ids:Array(${ID_TYPE[column]})}
       ${within('occurred_at', range)} AND ${ledgerCounts('brand_id IN {brands:Array(String)}')}
     GROUP BY ${column}, currency`;
}

function bounds(brandIds: string[], range: TotalsRange | undefined): Record<string, unknown> {
  const brands = [...new Set(brandIds)];
  return range ? { brands, start: chDateTime(range.start), end: chDateTime(range.end) } : { brands };
}

function within(column: 'day' | 'occurred_at', range: TotalsRange | undefined): string {
  if (!range) return '';
  if (column === 'day') {
    return "AND toDate(clicked_at) >= toDate({start:DateTime64(3, 'UTC')}) AND toDate(clicked_at) < toDate({end:DateTime64(3, 'UTC')})";
  }
  return `AND ${column} >= {start:DateTime64(3, 'UTC')} AND ${column} < {end:DateTime64(3, 'UTC')}`;
}
