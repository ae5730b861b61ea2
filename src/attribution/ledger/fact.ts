import type { Selectable } from 'kysely';
import type { LedgerEventsTable } from '../../db/schema';
import { chDateTime } from '../../warehouse/values';

export type LedgerRow = Selectable<LedgerEventsTable>;

/** The ClickHouse `ledger` row of a recorded ledger event; its id is the Postgres row id. */
export function ledgerFact(row: LedgerRow) {
  return {
    brand_id: row.brand_id,
    id: row.id,
    event_type: row.event_type,
    transaction_id: row.transaction_id,
    external_user_id: row.external_user_id,
    // numeric(18,4) arrives from pg as exact decimal text; ClickHouse reads it into Decimal(18,4).
    amount: row.amount,
    currency: row.currency,
    source: row.source,
    click_token: row.click_token,
    link_id: row.link_id,
    creator_id: row.creator_id,
    code_id: row.code_id,
    code_label: row.code_label,
    resolution_method: row.resolution_method,
    confidence: row.confidence,
    sandbox: row.sandbox ? 1 : 0,
    // A provider webhook's row; it may name the public row of its key it replaces (docs/webhooks.md).
    verified: row.verified ? 1 : 0,
    supersedes: row.supersedes,
    occurred_at: chDateTime(row.occurred_at),
    recorded_at: chDateTime(row.recorded_at),
  };
}

export type LedgerFact = ReturnType<typeof ledgerFact>;
