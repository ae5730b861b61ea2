import { isUtf8 } from 'node:buffer';
import { z } from 'zod';
import { CURRENCIES, type Currency, type LedgerDraft, type LedgerEventType, type Provider, UUID_SHAPED } from '../ledger/types';
import { unparseable } from './connector';

/** Helpers shared by the connectors' mappings (docs/webhooks.md#what-each-provider-records). */

/**
 * `<store>:<store id>`: one App Store purchase reported by `apple` and `revenuecat` has one key, and
 * stores' id spaces stay apart. A key over 128 characters is kept whole: the delivery is then
 * refused as unrecordable (isRecordableDraft), never cut or rewritten.
 */
export function transactionKey(store: string, ...id: string[]): string {
  return [store, ...id].join(':');
}

/** What a connector answers for a value it cannot record as sent (docs/webhooks.md, "Amounts"). */
const unrecordable = () => unparseable('unrecordable_values');

/**
 * A money amount sent as decimal text (Shopify: `"64.00"`), or a plain JSON number. Anything
 * else (`""`, `"0x10"`, `"1e3"`, `" 5"`) is unrecordable, never coerced by `Number()`.
 */
export function decimalAmount(value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value)) return Number(value);
  throw unrecordable();
}

/**
 * An amount in a currency's smallest unit (Stripe): an integer JSON carried exactly. `1.5`
 * cents, text, or an integer beyond 2^53 (9007199254740993 parses as ...992) is unrecordable.
 */
export function minorUnits(value: unknown): number {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  throw unrecordable();
}

/**
 * Amount and currency of a ledger row: a supported currency is kept; otherwise the
 * provider's own USD figure when it has one; otherwise the number labelled USD (the unsupported-currency
 * fallback, knowingly misstated; docs/webhooks.md#amounts). Rounded to the ledger's 4 decimals.
 */
export function money(
  amount: number | null | undefined,
  currency: string | null | undefined,
  usdAmount?: number | null,
): { amount: number; currency: Currency } {
  const upper = (currency ?? '').trim().toUpperCase();
  if ((CURRENCIES as readonly string[]).includes(upper) && amount != null) return { amount: round4(amount), currency: upper as Currency };
  if (usdAmount != null) return { amount: round4(usdAmount), currency: 'USD' };
  return { amount: round4(amount ?? 0), currency: 'USD' };
}

/** Refund rows are stored negative whatever sign the provider sends, so a sum is net revenue. */
export const refundAmount = (amount: number): number => -Math.abs(amount);

/** The amount a row of this type records: trials are free, refunds negative. */
export function amountFor(eventType: LedgerEventType, amount: number): number {
  if (eventType === 'trial') return 0;
  return eventType === 'refund' ? refundAmount(amount) : amount;
}

const round4 = (n: number) => Math.round(n * 10_000) / 10_000;


/** A well-formed UUID, lowercased; anything else is null (Apple's appAccountToken). */
export function uuidOrNull(value: unknown): string | null {
  return typeof value === 'string' && UUID_SHAPED.test(value.trim()) ? value.trim().toLowerCase() : null;
}

/**
 * An external user id as the ledger keeps it. Install IDs are UUIDs, uppercase from Swift's
 * `UUID().uuidString` and lowercase from Apple's appAccountToken, so UUID-shaped ids are
 * lowercased everywhere; other ids are kept as sent.
 */
export function userId(...candidates: unknown[]): string | null {
  for (const c of candidates) {
    const value = text(c);
    if (value) return uuidOrNull(value) ?? value;
  }
  return null;
}

/** A click token is any value starting with svc_; the ledger checks which link minted it. */
export function clickToken(...candidates: unknown[]): string | null {
  for (const c of candidates) {
    if (typeof c === 'string' && c.trim().startsWith('svc_')) return c.trim();
  }
  return null;
}

/** A non-empty trimmed string, or null. */
export function text(value: unknown): string | null {
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value.trim() ? value.trim() : null;
}

/** Stripe's timestamps are Unix seconds. */
export const fromEpochSeconds = (s: number) => new Date(s * 1000);

/** Parses a JSON body; anything unreadable is a 422. */
export function parseJson(body: Buffer | string): unknown {
  // Bytes that are not UTF-8 would decode to U+FFFD and be recorded: unreadable, as malformed JSON is.
  if (typeof body !== 'string' && !isUtf8(body)) throw unparseable();
  try {
    return JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    throw unparseable();
  }
}

/** Validates part of a payload with zod; a mismatch is a 422 (the provider will retry). */
export function read<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw unparseable();
  return parsed.data;
}

/** A date-time string as providers send it (`2026-01-01T10:15:00.000000+0000` included). */
export const dateString = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'not a date');

/** Install-ID attribute names as RevenueCat and Adapty allow them. */
export const attributeName = z
  .string()
  .trim()
  .regex(/^[A-Za-z][A-Za-z0-9_.-]{0,39}$/, 'starts with a letter; letters, digits, _ . - ; at most 40 characters');

/**
 * The transaction-key prefix of a store as the subscription platforms name it
 * (RevenueCat `APP_STORE`, Adapty `app_store`): the store that moved the money.
 */
export function storePrefix(store: string | null | undefined): string {
  const upper = (store ?? 'unknown').trim().toUpperCase();
  if (upper === 'APP_STORE' || upper === 'MAC_APP_STORE') return 'apple';
  if (upper === 'PLAY_STORE') return 'google';
  return upper.toLowerCase();
}

/** `transactionKey(store, id)` when the id is present. */
export function optionalKey(store: string, id: unknown): string | null {
  const value = text(id);
  return value ? transactionKey(store, value) : null;
}

/**
 * The transactions a refund copies its attribution from (LedgerDraft.refundOf), in order:
 * the refunded transaction first, then e.g. the subscription's original purchase.
 */
export function refundTargets(...keys: (string | null)[]): string[] {
  return [...new Set(keys.filter((k): k is string => !!k))];
}

/** What the subscription platforms (RevenueCat, Adapty) report of a charge, in their own field names' stead. */
export type SubscriptionCharge = {
  source: Extract<Provider, 'revenuecat' | 'adapty'>;
  eventType: LedgerEventType;
  store: string | null | undefined;
  transactionId: unknown;
  originalTransactionId: unknown;
  /** The app's subscriber attribute of this name (svc_cid, svc_code, the install ID's). */
  attribute(name: string): unknown;
  installIdAttribute: string;
  /** Ids of the app's user, most specific first, after the install ID attribute. */
  userIds: unknown[];
  paid: { amount: number; currency: Currency };
  sandbox: boolean;
  occurredAt: Date;
};

/**
 * The ledger draft of a RevenueCat or Adapty charge: key `<store>:<transaction id>`, the install ID
 * attribute as user, `svc_cid` and `svc_code` as click token and code; a refund copies the refunded
 * transaction's attribution, else the original purchase's.
 */
export function subscriptionDraft(c: SubscriptionCharge): LedgerDraft {
  const store = storePrefix(c.store);
  const transactionId = transactionKey(store, read(z.string().min(1), c.transactionId));
  return {
    eventType: c.eventType,
    transactionId,
    externalUserId: userId(c.attribute(c.installIdAttribute), ...c.userIds),
    amount: amountFor(c.eventType, c.paid.amount),
    currency: c.paid.currency,
    source: c.source,
    clickToken: clickToken(c.attribute('svc_cid')),
    code: text(c.attribute('svc_code')),
    sandbox: c.sandbox,
    occurredAt: c.occurredAt,
    refundOf: c.eventType === 'refund' ? refundTargets(transactionId, optionalKey(store, c.originalTransactionId)) : undefined,
  };
}

/**
 * Parses JSON keeping integers beyond 2^53 exact, as strings: `JSON.parse` would turn
 * Shopify's sample order ID 820982911946154508 into …500. Only number tokens outside
 * strings are touched.
 */
export function parseJsonKeepingBigIntegers(body: Buffer): unknown {
  if (!isUtf8(body)) throw unparseable();
  const json = body.toString('utf8');
  let out = '';
  let copied = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const ch = json[i]!;
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') {
      inString = true;
    } else if (ch === '-' || (ch >= '0' && ch <= '9')) {
      let end = i + 1;
      while (end < json.length && /[0-9.eE+-]/.test(json[end]!)) end++;
      const token = json.slice(i, end);
      if (/^-?\d+$/.test(token) && !Number.isSafeInteger(Number(token))) {
        out += `${json.slice(copied, i)}"${token}"`;
        copied = end;
      }
      i = end - 1;
    }
  }
  return parseJson(out + json.slice(copied));
}
