import { z } from 'zod';
import type { LedgerDraft, LedgerEventType } from '../../ledger/types';
import { requireAuthorization } from '../authenticity';
import { type Connector, type Handlers, ignored, type MapContext, mapByType, rows } from '../connector';
import {
  attributeName,
  money,
  parseJson,
  read,
  subscriptionDraft,
} from '../mapping';

/**
 * RevenueCat (docs/webhooks.md#what-each-provider-records), authenticated by its static Authorization value. The
 * choices where RevenueCat's documentation is silent: docs/webhooks.md.
 */

export const revenuecatSettings = z.strictObject({
  /** The subscriber attribute the app sets to the install ID. */
  install_id_attribute: attributeName.default('svc_install_id'),
  /** Only this RevenueCat app's events count (one project webhook may span several apps). */
  app_id: z.string().trim().min(1).max(200).optional(),
});
type Settings = z.output<typeof revenuecatSettings>;

const attribute = z.looseObject({ value: z.unknown() });
const revenuecatEvent = z.looseObject({
  type: z.string(),
  app_id: z.string().nullish(),
  app_user_id: z.string().nullish(),
  store: z.string().nullish(),
  environment: z.string().nullish(),
  period_type: z.string().nullish(),
  transaction_id: z.string().nullish(),
  original_transaction_id: z.string().nullish(),
  purchased_at_ms: z.number().nullish(),
  event_timestamp_ms: z.number().nullish(),
  is_trial_conversion: z.boolean().nullish(),
  cancel_reason: z.string().nullish(),
  currency: z.string().nullish(),
  price: z.number().nullish(),
  price_in_purchased_currency: z.number().nullish(),
  subscriber_attributes: z.record(z.string(), attribute).nullish(),
});
type RevenueCatEvent = z.output<typeof revenuecatEvent>;

const handlers: Handlers<RevenueCatEvent, Settings> = {
  INITIAL_PURCHASE: (e, ctx) => rows(toDraft(e, ctx, e.period_type === 'TRIAL' ? 'trial' : 'purchase')),
  NON_RENEWING_PURCHASE: (e, ctx) => rows(toDraft(e, ctx, 'purchase')),
  RENEWAL: (e, ctx) => rows(toDraft(e, ctx, e.is_trial_conversion ? 'purchase' : 'renewal')),
  // Only a refund issued through the store's support (cancel_reason CUSTOMER_SUPPORT) moves
  // money; other cancellations just stop the renewal.
  CANCELLATION: (e, ctx) =>
    e.cancel_reason === 'CUSTOMER_SUPPORT' ? rows(toDraft(e, ctx, 'refund')) : ignored('cancellation without a refund'),
};

export const revenuecat: Connector<Settings, Buffer, RevenueCatEvent> = {
  provider: 'revenuecat',
  settingsSchema: revenuecatSettings,

  async authenticate(delivery, connection) {
    requireAuthorization(delivery.headers, [connection.signingSecret], { acceptBearer: true });
    return delivery.body;
  },

  parse(body) {
    return [read(z.looseObject({ event: revenuecatEvent }), parseJson(body)).event];
  },

  async map(event, ctx) {
    if (ctx.settings.app_id && event.app_id !== ctx.settings.app_id) return ignored('event of another RevenueCat app');
    return mapByType(handlers, event.type, event, ctx);
  },
};

function toDraft(e: RevenueCatEvent, ctx: MapContext<Settings>, eventType: LedgerEventType): LedgerDraft {
  const refund = eventType === 'refund';
  const occurredMs = refund ? (e.event_timestamp_ms ?? e.purchased_at_ms) : (e.purchased_at_ms ?? e.event_timestamp_ms);
  return subscriptionDraft({
    source: 'revenuecat',
    eventType,
    store: e.store,
    transactionId: e.transaction_id,
    originalTransactionId: e.original_transaction_id,
    attribute: (name) => e.subscriber_attributes?.[name]?.value,
    installIdAttribute: ctx.settings.install_id_attribute,
    userIds: [e.app_user_id],
    // `price` is USD; `price_in_purchased_currency` is in `currency`.
    paid: money(e.price_in_purchased_currency, e.currency, e.price),
    sandbox: e.environment === 'SANDBOX',
    occurredAt: new Date(read(z.number(), occurredMs)),
  });
}
