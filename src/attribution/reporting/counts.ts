/**
 * Which ledger rows count (docs/webhooks.md, "One transaction reported twice"), as one condition on
 * the rows of ClickHouse's `ledger`, used by every reader of totals, feeds and lists. A row counts
 * while no row of its brand names it in `supersedes`; a public refund, while no verified row
 * superseded a public purchase of its transaction. The verified row alone carries the fact, so a
 * read counts the public row until the verified one lands, then the verified one only.
 *
 * `brands` is the read's own brand condition on `brand_id` (fixed SQL text with bound parameters,
 * e.g. `brand_id = {brand:String}`), which bounds the subqueries too; the read is `FROM ledger`.
 */
export function ledgerCounts(brands: string): string {
  // The outer row's columns are named through the table, `ledger` (a read may alias another value `id`).
  return `ledger.id NOT IN (SELECT assumeNotNull(supersedes) FROM ledger WHERE ${brands} AND supersedes IS NOT NULL)
       AND (ledger.verified = 1 OR ledger.event_type != 'refund' OR (ledger.brand_id, ledger.transaction_id) NOT IN (
         SELECT brand_id, transaction_id FROM ledger WHERE ${brands} AND supersedes IS NOT NULL AND event_type = 'purchase'))`;
}
