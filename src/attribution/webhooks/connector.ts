import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';
import type { LedgerDraft, LedgerEventType, Provider } from '../ledger/types';
import { refuse } from '../../refusal';

/**
 * The one interface every billing-provider connector implements (docs/webhooks.md), called
 * by ./routes.ts as authenticate → parse → map. A refusing step throws a Refusal (unauthenticated, unparseable): 401 from
 * `authenticate`, 422 from `parse` or `map` (a known event type whose fields cannot be read).
 */
export interface Connector<Settings = unknown, Verified = unknown, Event = unknown> {
  readonly provider: Provider;
  /** The connection's `settings`, validated on create and update and re-read on every delivery. */
  readonly settingsSchema: z.ZodType<Settings>;
  /**
   * Checks that the delivery comes from the provider, on the raw bytes. Answers what
   * `parse` reads: the body itself, or (Apple) the verified, decoded signed payloads.
   */
  authenticate(delivery: Delivery, connection: ConnectionCredentials<Settings>): Promise<Verified>;
  /** Reads the provider's envelope into its events (none for a bare verification ping). */
  parse(verified: Verified, delivery: Delivery): Event[];
  /** One event → zero or more ledger rows; zero rows means the event is ignored. */
  map(event: Event, context: MapContext<Settings>): Promise<Mapped>;
}

/** One webhook request as received. `body` is never re-serialised: signatures cover these bytes. */
export type Delivery = { body: Buffer; headers: IncomingHttpHeaders; receivedAt: Date };

/** What a connector may know of the connection the URL token named. */
export type ConnectionCredentials<Settings> = {
  signingSecret: string | null;
  /** Adapty only: the Authorization value of its sandbox endpoint. */
  sandboxSecret: string | null;
  settings: Settings;
};

/** A connector's refusal (a Refusal, src/refusal.ts): its code is short, never holds a secret, and becomes the connection's last_error. */
export const unauthenticated = (reason: string) => refuse(401, reason);
export const unparseable = (reason = 'unparseable_payload') => refuse(422, reason);

/** What a connector may ask about the brand while mapping. */
export type MapContext<Settings> = {
  settings: Settings;
  /** Whether the brand's ledger holds a verified row (a webhook's) with this key (Apple: was there a trial?). */
  hasLedgerRow(eventType: LedgerEventType, transactionId: string): Promise<boolean>;
  /** The ledger transaction a reference was remembered for (see `Mapped.references`), or null. */
  reference(key: string): Promise<string | null>;
  /** The first of `codes` that is one of the brand's active creator codes (Shopify discount codes). */
  firstActiveCode(codes: string[]): Promise<string | null>;
};

/** Remembers that the provider identifier `key` belongs to the ledger transaction `transactionId`. */
export type LedgerReference = { key: string; transactionId: string };

export type Mapped = {
  rows: LedgerDraft[];
  /** Why no row was written; set exactly when `rows` is empty. Logged, not answered. */
  ignoredBecause?: string;
  /** Stored even when the event is ignored or a duplicate: later events may need them. */
  references?: LedgerReference[];
};

export const rows = (...drafts: LedgerDraft[]): Mapped => ({ rows: drafts });
export const ignored = (because: string, references?: LedgerReference[]): Mapped => ({ rows: [], ignoredBecause: because, references });

/**
 * The explicit list of accepted event types of a provider, one handler each. Any type not
 * in the list is ignored by `mapByType`.
 */
export type Handlers<Event, Settings> = Record<string, (event: Event, context: MapContext<Settings>) => Promise<Mapped> | Mapped>;

export async function mapByType<Event, Settings>(
  handlers: Handlers<Event, Settings>,
  type: string,
  event: Event,
  context: MapContext<Settings>,
): Promise<Mapped> {
  const handler = Object.hasOwn(handlers, type) ? handlers[type] : undefined;
  return handler ? handler(event, context) : ignored(`event type ${type} is not a conversion`);
}
