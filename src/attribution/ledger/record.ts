import type { Db } from '../../db/database';
import type { Logger } from '../../logger';
import type { Queues } from '../../facts';
import { newId } from '../../secrets';
import { columnList } from '../../db/recordset';
import { type Credit, type CreditColumns, CreditSources, codeCredit, countCodeCredits, creditColumns, linkCredit, UNATTRIBUTED } from './credit';
import { type LedgerRow, ledgerFact } from './fact';
import { keptInstallId } from '../installs/record';
import { AcceptedRows, queueOutboxFact } from '../../queues/outbox/accept';
import { EVENT_TYPES, isRecordableAmount, type LedgerDraft, MAX_TRANSACTION_ID, type RecordLedgerEvent, type ResolutionMethod, UUID_SHAPED } from './types';

/** A ledger row as inserted: every column but those Postgres fills; the amount as normalised. */
type NewLedgerRow = Omit<LedgerRow, 'recorded_at' | 'amount'> & { amount: string | number };

/** The columns a new ledger row is inserted with. */
const LEDGER_COLUMNS = columnList({
  id: true,
  brand_id: true,
  event_type: true,
  transaction_id: true,
  external_user_id: true,
  amount: true,
  currency: true,
  source: true,
  click_token: true,
  link_id: true,
  creator_id: true,
  code_id: true,
  code_label: true,
  resolution_method: true,
  confidence: true,
  sandbox: true,
  occurred_at: true,
} satisfies Record<keyof NewLedgerRow, true>);

/** The attribution columns of a ledger row: a credit's, and the click token that earned it. */
type Attribution = CreditColumns & { click_token: string | null };

function fromCredit(credit: Credit, clickToken: string | null = null): Attribution {
  return { ...creditColumns(credit), click_token: clickToken };
}

/** What a refund may take its attribution from: any earlier row of the transaction but another refund. */
const REFUNDABLE_TYPES = EVENT_TYPES.filter((type) => type !== 'refund');

const ATTRIBUTION_COLUMNS = ['resolution_method', 'confidence', 'link_id', 'creator_id', 'code_id', 'code_label'] as const;


export type LedgerDeps = { db: Db; queues: Queues; log: Logger; credit: CreditSources };

/**
 * The conversion ledger (SPEC 3.2, 6), through which the pixel, the SDKs and the billing webhooks
 * record: normalise, attribute, accept once per (brand, event_type, transaction_id) with the fact
 * pending in the outbox, queue the ClickHouse fact.
 */
export class Ledger {
  /** New rows get back their id's recorded time and the amount as Postgres rounded it. */
  private readonly accepted: AcceptedRows<NewLedgerRow, Pick<LedgerRow, 'amount' | 'recorded_at'>>;

  constructor(private readonly deps: LedgerDeps) {
    this.accepted = new AcceptedRows(deps.db, {
      table: 'ledger_events',
      kind: 'ledger',
      columns: LEDGER_COLUMNS,
      key: ['brand_id', 'event_type', 'transaction_id'],
      returning: ['amount'],
      alongside: { reads: ['code_id'], cte: countCodeCredits() },
    });
  }

  /** The credit sources the ledger attributes with, shared with the install recorder (one link memo per process). */
  get credit(): CreditSources {
    return this.deps.credit;
  }

  readonly record: RecordLedgerEvent = async (brandId, draft) => {
    const event = normalize(draft);
    const attribution = await this.attribute(brandId, event);
    const id = newId();
    const newRow: NewLedgerRow = {
      id,
      brand_id: brandId,
      event_type: event.eventType,
      // Without a transaction id the event is never deduplicated: its own id stands in.
      transaction_id: event.transactionId ?? id,
      external_user_id: event.externalUserId,
      amount: event.amount,
      currency: event.currency,
      source: event.source,
      sandbox: event.sandbox,
      occurred_at: event.occurredAt,
      ...attribution,
    };
    const recorded = await this.accepted.insert(newRow);
    if (!recorded) return { id: await this.recordedId(brandId, event), duplicate: true };
    const row: LedgerRow = { ...newRow, ...recorded };
    queueOutboxFact(this.deps.queues, this.deps.log, 'ledger', ledgerFact(row));
    return { id: row.id, duplicate: false };
  };

  /**
   * First match wins: the event's click token (this brand's links only); for a purchase, the
   * attributed install whose install_id is the external_user_id; the event's code; for a refund, the
   * refunded row's attribution; else unattributed.
   */
  private async attribute(brandId: string, event: NormalizedEvent): Promise<Attribution> {
    const { credit } = this.deps;
    const clickedLink = await credit.clickToken(brandId, event.clickToken);
    if (clickedLink) return fromCredit(linkCredit('click', clickedLink), event.clickToken);
    if (event.eventType === 'purchase') {
      const inherited = await this.installAttribution(brandId, event.externalUserId);
      if (inherited) return inherited;
    }
    const code = await credit.code(brandId, event.code);
    if (code) return fromCredit(codeCredit(code));
    if (event.eventType === 'refund') {
      const refunded = await this.refundedAttribution(brandId, event.refundOf);
      if (refunded) return refunded;
    }
    return fromCredit(UNATTRIBUTED);
  }

  /** Purchase inheritance (SPEC 3.2): the link, creator, code, method and confidence of the user's install. */
  private async installAttribution(brandId: string, externalUserId: string | null): Promise<Attribution | null> {
    // The user id as install ids are kept: a longer one still names its install.
    const installId = externalUserId ? keptInstallId(externalUserId) : '';
    if (!installId) return null;
    // Matching the exact, lower- and upper-case forms keeps the (brand_id, install_id) index in use.
    const installIds = UUID_SHAPED.test(installId) ? [installId, installId.toLowerCase(), installId.toUpperCase()] : [installId];
    const install = await this.deps.db
      .selectFrom('installs')
      .select(ATTRIBUTION_COLUMNS)
      .where('brand_id', '=', brandId)
      .where('install_id', 'in', installIds)
      .where('attributed', '=', true)
      .orderBy('recorded_at')
      .limit(1)
      .executeTakeFirst();
    return install ? { ...install, resolution_method: install.resolution_method as ResolutionMethod, confidence: install.confidence ?? 0, click_token: null } : null;
  }

  /** A refund without attribution of its own copies it from the earlier row of the same transaction (purchase first). */
  private async refundedAttribution(brandId: string, transactionIds: string[]): Promise<Attribution | null> {
    if (transactionIds.length === 0) return null;
    const original = await this.deps.db
      .selectFrom('ledger_events')
      .select([...ATTRIBUTION_COLUMNS, 'click_token'])
      .where('brand_id', '=', brandId)
      // The event types listed, rather than `<> 'refund'`, let the idempotency key serve the look-up.
      .where('event_type', 'in', REFUNDABLE_TYPES)
      .where('transaction_id', 'in', transactionIds)
      .where('resolution_method', '<>', 'unattributed')
      .orderBy((eb) => eb('event_type', '=', 'purchase'), 'desc')
      .orderBy('recorded_at')
      .limit(1)
      .executeTakeFirst();
    return original ? { ...original, resolution_method: original.resolution_method as ResolutionMethod, confidence: original.confidence ?? 0 } : null;
  }

  private async recordedId(brandId: string, event: NormalizedEvent): Promise<string> {
    const row = await this.deps.db
      .selectFrom('ledger_events')
      .select('id')
      .where('brand_id', '=', brandId)
      .where('event_type', '=', event.eventType)
      .where('transaction_id', '=', event.transactionId!)
      .executeTakeFirstOrThrow();
    return row.id;
  }
}

type NormalizedEvent = Omit<LedgerDraft, 'refundOf'> & { refundOf: string[] };

/**
 * The ledger's invariants, whatever the source: transaction ids trimmed and cut to 128
 * characters, amounts to 4 decimals, refunds negative, trials free, and only provider
 * webhooks may mark sandbox rows (the pixel and the SDK are always live).
 */
function normalize(draft: LedgerDraft): NormalizedEvent {
  const transactionId = cut(draft.transactionId, MAX_TRANSACTION_ID);
  // Sources refuse such amounts first; this keeps one from failing a whole batched insert.
  if (!isRecordableAmount(draft.amount)) throw new RangeError(`ledger amount out of range: ${draft.amount}`);
  const amount = Math.round(draft.amount * 10_000) / 10_000;
  return {
    ...draft,
    transactionId,
    externalUserId: cut(draft.externalUserId, 256),
    clickToken: cut(draft.clickToken, 256),
    code: cut(draft.code, 64),
    amount: draft.eventType === 'refund' ? -Math.abs(amount) : draft.eventType === 'trial' ? 0 : amount,
    sandbox: draft.source === 'pixel' || draft.source === 'sdk' ? false : draft.sandbox,
    refundOf: (draft.refundOf ?? [transactionId]).filter((t): t is string => !!t),
  };
}

function cut(value: string | null, max: number): string | null {
  const trimmed = value?.trim().slice(0, max);
  return trimmed ? trimmed : null;
}

/** The ledger of a process, for the /events route and the billing webhook connectors. */
export function createLedger(services: { db: Db; queues: Queues; log: Logger; config: { secretKey: string } }): Ledger {
  return new Ledger({ ...services, credit: new CreditSources(services.db, services.config.secretKey) });
}
