import type { Db } from '../../db/database';
import type { Logger } from '../../logger';
import type { Queues } from '../../facts';
import { newId } from '../../secrets';
import { columnList } from '../../db/recordset';
import { type RawBuilder, sql } from 'kysely';
import { type Credit, type CreditColumns, CreditSources, codeCredit, countCodeCredits, creditColumns, linkCredit, UNATTRIBUTED } from './credit';
import { type LedgerRow, ledgerFact } from './fact';
import { keptInstallId } from '../installs/record';
import { LinkOpens } from '../links/opens';
import { AcceptedRows, queueOutboxFact } from '../../queues/outbox/accept';
import {
  EVENT_TYPES,
  isRecordableAmount,
  isVerifiedSource,
  type LedgerDraft,
  type LedgerEventType,
  MAX_TRANSACTION_ID,
  type RecordLedgerEvent,
  type RecordOutcome,
  RefundRefused,
  type ResolutionMethod,
  UUID_SHAPED,
} from './types';

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
  verified: true,
  supersedes: true,
  occurred_at: true,
} satisfies Record<keyof NewLedgerRow, true>);

/** Whether the ledger row `row` names is a row of the same key that a verified row superseded. */
const superseded = (row: string) => sql<boolean>`EXISTS (
  SELECT 1 FROM ledger_events s
  WHERE s.brand_id = ${sql.ref(`${row}.brand_id`)} AND s.event_type = ${sql.ref(`${row}.event_type`)}
    AND s.transaction_id = ${sql.ref(`${row}.transaction_id`)} AND s.verified AND s.supersedes = ${sql.ref(`${row}.id`)})`;

/**
 * The rows a batch inserts (docs/webhooks.md, "One transaction reported twice"): a verified row
 * names in `supersedes` the public row of its key; a public row is dropped (a duplicate) when a
 * verified row holds its key, in the table or in the same batch. Both look-ups lock the key and
 * read afresh (migrations/0013), so two processes accepting the two rows at once cannot both win.
 */
const supersedingSelect = (rows: RawBuilder<NewLedgerRow>) => sql`
  WITH i AS (${rows})
  SELECT ${sql.join(
    LEDGER_COLUMNS.map((column) =>
      column === 'supersedes'
        ? sql`CASE WHEN i.verified THEN ledger_public_row(i.brand_id, i.event_type, i.transaction_id) END`
        : sql.ref(`i.${column}`),
    ),
  )}
  FROM i
  WHERE i.verified OR NOT (
    EXISTS (SELECT 1 FROM i w WHERE w.verified AND w.brand_id = i.brand_id AND w.event_type = i.event_type AND w.transaction_id = i.transaction_id)
    OR ledger_verified_holds(i.brand_id, i.event_type, i.transaction_id))`;

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
 * The conversion ledger (docs/api.md#attribution-api), through which the pixel, the SDKs and the billing webhooks
 * record: normalise, attribute, accept once per (brand, event_type, transaction_id) with the fact
 * pending in the outbox, queue the ClickHouse fact.
 */
export class Ledger {
  /** New rows get back their id's recorded time and the amount as Postgres rounded it. */
  private readonly accepted: AcceptedRows<NewLedgerRow, Pick<LedgerRow, 'amount' | 'supersedes' | 'recorded_at'>>;
  /** Opens of creator links by installed apps, read in Postgres so a purchase right after one finds it. */
  private readonly opens: LinkOpens;

  constructor(private readonly deps: LedgerDeps) {
    this.accepted = new AcceptedRows(deps.db, {
      table: 'ledger_events',
      kind: 'ledger',
      columns: LEDGER_COLUMNS,
      // At most one public and one verified row a key.
      key: ['brand_id', 'event_type', 'transaction_id', 'verified'],
      returning: ['amount', 'supersedes'],
      alongside: { reads: ['code_id'], cte: countCodeCredits() },
      select: supersedingSelect,
    });
    this.opens = new LinkOpens(deps.db);
  }

  /** The credit sources the ledger attributes with, shared with the install recorder (one link memo per process). */
  get credit(): CreditSources {
    return this.deps.credit;
  }

  readonly record: RecordLedgerEvent = async (brandId, draft) => {
    const event = normalize(draft);
    if (event.eventType === 'refund' && !event.verified) return this.recordPublicRefund(brandId, event);
    return this.insert(brandId, event, await this.attribute(brandId, event));
  };

  /**
   * A public refund (docs/api.md, "Refunds"): a duplicate of its key first, then only against a
   * public purchase of its transaction that still counts, at most its amount, with its
   * attribution and currency; else RefundRefused and nothing is recorded.
   */
  private async recordPublicRefund(brandId: string, event: NormalizedEvent): Promise<RecordOutcome> {
    if (event.transactionId && (await this.recordedRow(brandId, 'refund', event.transactionId))) {
      return { id: await this.recordedId(brandId, event), duplicate: true };
    }
    const purchase = event.transactionId ? await this.countingPublicPurchase(brandId, event.transactionId) : undefined;
    if (!purchase || Math.abs(event.amount) > Number(purchase.amount)) throw new RefundRefused();
    const { amount: _, currency, ...attribution } = purchase;
    return this.insert(brandId, { ...event, currency: currency as NormalizedEvent['currency'] }, {
      ...attribution,
      resolution_method: attribution.resolution_method as ResolutionMethod,
      confidence: attribution.confidence ?? 0,
    });
  }

  private async insert(brandId: string, event: NormalizedEvent, attribution: Attribution): Promise<RecordOutcome> {
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
      verified: event.verified,
      supersedes: null, // the insert names the public row a verified row replaces
      occurred_at: event.occurredAt,
      ...attribution,
    };
    const recorded = await this.accepted.insert(newRow);
    if (!recorded) return { id: await this.recordedId(brandId, event), duplicate: true };
    const row: LedgerRow = { ...newRow, ...recorded };
    queueOutboxFact(this.deps.queues, this.deps.log, 'ledger', ledgerFact(row));
    return { id: row.id, duplicate: false };
  }

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
      const opened = await this.openedLink(brandId, event);
      if (opened) return opened;
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

  /**
   * Credit after an open (docs/api.md, "Opens"): the link the user's recorded install last opened
   * in the 7 days up to the purchase, credited as its click token would be.
   */
  private async openedLink(brandId: string, event: NormalizedEvent): Promise<Attribution | null> {
    const open = await this.opens.creditFor(brandId, event.externalUserId, event.occurredAt);
    const link = open && (await this.deps.credit.links.byId(open.linkId));
    return open && link?.brandId === brandId ? fromCredit(linkCredit('click', link), open.clickToken) : null;
  }

  /** Purchase inheritance: the link, creator, code, method and confidence of the user's install. */
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

  /**
   * A refund without attribution of its own copies it from the earlier row of the same
   * transaction (purchase first), among the rows that still count (none a verified row superseded).
   */
  private async refundedAttribution(brandId: string, transactionIds: string[]): Promise<Attribution | null> {
    if (transactionIds.length === 0) return null;
    const original = await this.deps.db
      .selectFrom('ledger_events as l')
      .select([...ATTRIBUTION_COLUMNS, 'click_token'])
      .where('brand_id', '=', brandId)
      // The event types listed, rather than `<> 'refund'`, let the idempotency key serve the look-up.
      .where('event_type', 'in', REFUNDABLE_TYPES)
      .where('transaction_id', 'in', transactionIds)
      .where('resolution_method', '<>', 'unattributed')
      .where(sql<boolean>`NOT ${superseded('l')}`)
      .orderBy((eb) => eb('event_type', '=', 'purchase'), 'desc')
      .orderBy('recorded_at')
      .limit(1)
      .executeTakeFirst();
    return original ? { ...original, resolution_method: original.resolution_method as ResolutionMethod, confidence: original.confidence ?? 0 } : null;
  }

  /** The brand's public purchase of this transaction, while no verified row superseded it. */
  private countingPublicPurchase(brandId: string, transactionId: string) {
    return this.deps.db
      .selectFrom('ledger_events as l')
      .select(['amount', 'currency', ...ATTRIBUTION_COLUMNS, 'click_token'])
      .where('brand_id', '=', brandId)
      .where('event_type', '=', 'purchase')
      .where('transaction_id', '=', transactionId)
      .where('verified', '=', false)
      .where(sql<boolean>`NOT ${superseded('l')}`)
      .executeTakeFirst();
  }

  private async recordedRow(brandId: string, eventType: LedgerEventType, transactionId: string) {
    return this.deps.db
      .selectFrom('ledger_events')
      .select('id')
      .where('brand_id', '=', brandId)
      .where('event_type', '=', eventType)
      .where('transaction_id', '=', transactionId)
      // The row that counts first: the verified one.
      .orderBy('verified', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  private async recordedId(brandId: string, event: NormalizedEvent): Promise<string> {
    const row = await this.recordedRow(brandId, event.eventType, event.transactionId!);
    if (!row) throw new Error('ledger: a duplicate without a recorded row');
    return row.id;
  }
}

type NormalizedEvent = Omit<LedgerDraft, 'refundOf'> & { refundOf: string[]; verified: boolean };

/**
 * The ledger's invariants, whatever the source: transaction ids trimmed (never cut: at most 128
 * characters), amounts to 4 decimals, refunds negative, trials free, only provider webhooks
 * write verified rows and may mark sandbox rows (the pixel and the SDK are always live).
 */
function normalize(draft: LedgerDraft): NormalizedEvent {
  const transactionId = draft.transactionId?.trim() || null;
  // Sources refuse such values first; this keeps one from failing a whole batched insert.
  if (transactionId && transactionId.length > MAX_TRANSACTION_ID) throw new RangeError('ledger transaction_id over 128 characters');
  if (!isRecordableAmount(draft.amount)) throw new RangeError(`ledger amount out of range: ${draft.amount}`);
  const amount = Math.round(draft.amount * 10_000) / 10_000;
  return {
    ...draft,
    transactionId,
    externalUserId: cut(draft.externalUserId, 256),
    clickToken: cut(draft.clickToken, 256),
    code: cut(draft.code, 64),
    amount: draft.eventType === 'refund' ? -Math.abs(amount) : draft.eventType === 'trial' ? 0 : amount,
    verified: isVerifiedSource(draft.source),
    sandbox: isVerifiedSource(draft.source) ? draft.sandbox : false,
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
