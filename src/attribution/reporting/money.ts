/** Money per currency in major units, e.g. {"USD": 49.99}. */
export type Money = Record<string, number>;

/**
 * Which currencies a money total shows: one rule for the per-link and per-code totals
 * (./totals.ts) and the portal's /overview (README "Totals" and "Definitions"). A currency
 * appears in `revenue` when some live ledger row in it carries a non-zero amount, so
 * trials and signups (amount 0) alone add no `"USD": 0`, while a purchase refunded in
 * full still shows `{"USD": 0}`: money moved and came back. `refunds` likewise, counting
 * refund rows only.
 *
 * The expressions aggregate the live rows of one currency (callers filter `sandbox = 0`
 * and group by currency) into the sum in major units rounded to 2 decimals, or NULL when
 * the currency does not show; `addMoney` keeps the others.
 */
export const REVENUE_SQL = 'if(countIf(amount != 0) > 0, toFloat64(round(sum(amount), 2)), NULL)';

/** Refunds are stored negative; answered positive. */
export const REFUNDS_SQL =
  "if(countIf(event_type = 'refund' AND amount != 0) > 0, toFloat64(round(sumIf(-amount, event_type = 'refund'), 2)), NULL)";

/** Adds one currency's sum read through REVENUE_SQL or REFUNDS_SQL; NULL adds nothing. */
export function addMoney(money: Money, currency: string, sum: number | null): void {
  if (sum !== null) money[currency] = Number(sum);
}
