import { isRecordableInstant } from '../../recordable-time';
import { isStorableText } from '../../storable-text';

/**
 * The conversion ledger's vocabulary, shared by every source that writes to it:
 * the web pixel and SDK (`POST /api/public/attribution/events`) and the billing
 * provider connectors (`src/attribution/webhooks/providers/`).
 */

export const EVENT_TYPES = ['purchase', 'renewal', 'refund', 'trial', 'signup', 'lead', 'custom', 'install'] as const;
export type LedgerEventType = (typeof EVENT_TYPES)[number];

export const CURRENCIES = ['USD', 'CAD', 'EUR', 'GBP', 'AUD'] as const;
export type Currency = (typeof CURRENCIES)[number];

/** An unsupported or missing currency is recorded as USD (USD, CAD, EUR, GBP, AUD are kept). */
export function toCurrency(value: string | null | undefined): Currency {
  const upper = (value ?? '').trim().toUpperCase();
  return (CURRENCIES as readonly string[]).includes(upper) ? (upper as Currency) : 'USD';
}

export const PROVIDERS = ['revenuecat', 'adapty', 'stripe', 'shopify', 'apple'] as const;
export type Provider = (typeof PROVIDERS)[number];
export type LedgerSource = 'pixel' | 'sdk' | Provider;

export const MAX_TRANSACTION_ID = 128;

/** The largest amount, in major units, a ledger row carries either way, whatever its source (docs/api.md, docs/webhooks.md). */
export const MAX_LEDGER_AMOUNT = 1_000_000_000;

/** Amounts the ledger records: finite, at most a billion major units either way. */
export const isRecordableAmount = (amount: number) => Number.isFinite(amount) && Math.abs(amount) <= MAX_LEDGER_AMOUNT;

/** Rows a provider webhook writes are verified; the pixel's and the SDKs' are public. */
export const isVerifiedSource = (source: LedgerSource): boolean => source !== 'pixel' && source !== 'sdk';

/**
 * A public refund the ledger cannot take: no public purchase of its transaction that still
 * counts, or an amount beyond that purchase's (docs/api.md, "Refunds"). Nothing is recorded.
 */
export class RefundRefused extends Error {
  readonly code = 'invalid_refund';
  constructor() {
    super('invalid_refund');
  }
}

/**
 * Whether a draft can be stored as it is: its instant and amount are recordable and no text
 * holds the NUL character or a lone UTF-16 surrogate, which the stores cannot hold (a payload a
 * source sent is then refused whole, rather than failing in the database).
 */
export function isRecordableDraft(draft: LedgerDraft): boolean {
  if (!isRecordableInstant(draft.occurredAt.getTime()) || !isRecordableAmount(draft.amount)) return false;
  // Never cut: two transactions sharing their first 128 characters would merge.
  if (draft.transactionId !== null && draft.transactionId.trim().length > MAX_TRANSACTION_ID) return false;
  const texts = [draft.transactionId, draft.externalUserId, draft.clickToken, draft.code, ...(draft.refundOf ?? [])];
  return texts.every((text) => text === null || isStorableText(text));
}

/** What a source knows of one conversion, before attribution is resolved. */
export type LedgerDraft = {
  eventType: LedgerEventType;
  /** Deduplication key with (brand, eventType, verified); at most 128 characters, never cut. Null: never deduplicated. */
  transactionId: string | null;
  /** The brand's user id, or an install ID (which lets a purchase inherit the install's attribution). */
  externalUserId: string | null;
  /** Major units. Refund rows are stored as -abs(amount); trials as 0. */
  amount: number;
  currency: Currency;
  source: LedgerSource;
  /** A click token (prefix svc_) captured by the source; credits only the brand whose link minted it. */
  clickToken: string | null;
  /** A creator code, matched case-insensitively against the brand's active codes. */
  code: string | null;
  /** Only provider webhooks mark sandbox rows; they are stored and excluded from every total. */
  sandbox: boolean;
  occurredAt: Date;
  /**
   * Refunds without attribution of their own copy it from the brand's earlier row with
   * one of these transaction ids (default: the refund's own transaction id).
   */
  refundOf?: string[];
};

/** How a ledger row was credited. Inherited rows carry the install's method and confidence. */
export type ResolutionMethod = 'click' | 'code' | 'clipboard' | 'ip' | 'unattributed';

export type RecordOutcome = { id: string; duplicate: boolean };

/**
 * Records one ledger event: decides `duplicate` at once on (brand, event_type, transaction_id)
 * (a verified row supersedes a public one), attributes it, keeps the row in Postgres until
 * ClickHouse has it and queues the fact (./record.ts). A public refund may throw RefundRefused.
 */
export type RecordLedgerEvent = (brandId: string, draft: LedgerDraft) => Promise<RecordOutcome>;

/** A UUID in any case: install IDs made by Swift's UUID() are upper case, other platforms' lower case. */
export const UUID_SHAPED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
