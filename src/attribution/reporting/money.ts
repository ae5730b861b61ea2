/** Money per currency in major units, e.g. {"USD": 49.99}. */
export type Money = Record<string, number>;

/**
 * Which currencies a money total shows, for every total (docs/api.md, "Totals"): one whose live
 * rows carry a non-zero amount. Over one currency's live rows, the sum rounded to 2 decimals, or
 * NULL when the currency does not show; `addMoney` keeps the others.
 */
export const REVENUE_SQL = 'if(countIf(amount != 0) > 0, toFloat64(round(sum(amount), 2)), NULL)';

/** Refunds are stored negative; answered positive. */
export const REFUNDS_SQL =
  "if(countIf(event_type = 'refund' AND amount != 0) > 0, toFloat64(round(sumIf(-amount, event_type = 'refund'), 2)), NULL)";

/** Adds one currency's sum read through REVENUE_SQL or REFUNDS_SQL; NULL adds nothing. */
export function addMoney(money: Money, currency: string, sum: number | null): void {
  if (sum !== null) money[currency] = Number(sum);
}
