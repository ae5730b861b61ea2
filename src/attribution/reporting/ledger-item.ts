/**
 * The ledger item (docs/api.md): one ledger row with its link and creator named. The portal's
 * events feed answers it and a webhook's ledger event sends it as its data (docs/webhooks.md).
 */

export type LedgerItemRow = {
  id: string;
  event_type: string;
  transaction_id: string;
  source: string;
  amount: number | string;
  currency: string;
  /** ISO 8601, as answered. */
  occurred_at: string;
  sandbox: boolean;
  external_user_id: string | null;
  code_label: string | null;
  resolution_method: string;
  confidence: number | string | null;
};

export type LedgerItemLink = { id: number; domain: string; slug: string };
export type LedgerItemCreator = { id: string; name: string };

export function ledgerItem(row: LedgerItemRow, link: LedgerItemLink | null, creator: LedgerItemCreator | null) {
  return {
    id: row.id,
    event_type: row.event_type,
    transaction_id: row.transaction_id,
    source: row.source,
    amount: Number(row.amount),
    currency: row.currency,
    occurred_at: row.occurred_at,
    sandbox: row.sandbox,
    external_user_id: row.external_user_id,
    link,
    creator,
    code: row.code_label,
    resolution_method: row.resolution_method,
    confidence: row.confidence === null ? null : Number(row.confidence),
  };
}
