import { z } from 'zod';
import type { LedgerDraft, LedgerEventType } from '../../ledger/types';
import { requireAuthorization } from '../authenticity';
import { type Connector, type Handlers, ignored, type MapContext, mapByType, rows } from '../connector';
import {
  attributeName,
  dateString,
  money,
  parseJson,
  read,
  subscriptionDraft,
} from '../mapping';

/**
 * Adapty (docs/webhooks.md#what-each-provider-records), authenticated by its static Authorization values. The
 * choices where Adapty's documentation is silent: docs/webhooks.md.
 */

export const adaptySettings = z.strictObject({
  /** The Authorization value of Adapty's sandbox endpoint. Stored encrypted, never answered. */
  sandbox_secret: z.string().min(1).max(500).meta({ writeOnly: true }).optional(),
  /** The custom user attribute the app sets to the install ID. */
  install_id_attribute: attributeName.default('svc_install_id'),
  event_name_map: z.record(z.string().trim().min(1).max(100), z.string().regex(/^[a-z_]+$/, 'an Adapty event name')).optional(),
});
type Settings = z.output<typeof adaptySettings>;

const adaptyEvent = z.looseObject({
  event_type: z.string(),
  profile_id: z.string().nullish(),
  customer_user_id: z.string().nullish(),
  event_datetime: dateString.nullish(),
  event_properties: z
    .looseObject({
      store: z.string().nullish(),
      environment: z.string().nullish(),
      transaction_id: z.string().nullish(),
      original_transaction_id: z.string().nullish(),
      purchase_date: dateString.nullish(),
      currency: z.string().nullish(),
      price_local: z.number().nullish(),
      price_usd: z.number().nullish(),
    })
    .nullish(),
  user_attributes: z.record(z.string(), z.unknown()).nullish(),
});
/** An event, and whether its delivery carried the sandbox endpoint's Authorization value. */
type AdaptyEvent = z.output<typeof adaptyEvent> & { viaSandboxSecret: boolean };

const purchase = (e: AdaptyEvent, ctx: MapContext<Settings>) => rows(toDraft(e, ctx, 'purchase'));
const refund = (e: AdaptyEvent, ctx: MapContext<Settings>) => rows(toDraft(e, ctx, 'refund'));

const handlers: Handlers<AdaptyEvent, Settings> = {
  subscription_started: (e, ctx) => {
    const p = e.event_properties;
    return p?.price_local === 0 && p?.price_usd === 0 ? ignored('subscription start without a charge') : purchase(e, ctx);
  },
  trial_converted: purchase, // the first charge after a trial
  non_subscription_purchase: purchase,
  subscription_renewed: (e, ctx) => rows(toDraft(e, ctx, 'renewal')),
  trial_started: (e, ctx) => rows(toDraft(e, ctx, 'trial')),
  subscription_refunded: refund,
  non_subscription_purchase_refunded: refund,
};

export const adapty: Connector<Settings, { body: Buffer; viaSandboxSecret: boolean }, AdaptyEvent> = {
  provider: 'adapty',
  settingsSchema: adaptySettings,

  async authenticate(delivery, connection) {
    const [live, sandbox] = requireAuthorization(delivery.headers, [connection.signingSecret, connection.sandboxSecret], { acceptBearer: false });
    // Whoever holds only the sandbox value cannot record live revenue.
    return { body: delivery.body, viaSandboxSecret: sandbox === true && live !== true };
  },

  parse({ body, viaSandboxSecret }) {
    const json = parseJson(body);
    // Adapty's verification request is `{}`: no event, and it must get a 2xx.
    if (json !== null && typeof json === 'object' && !Array.isArray(json) && Object.keys(json).length === 0) return [];
    return [{ ...read(adaptyEvent, json), viaSandboxSecret }];
  },

  async map(event, ctx) {
    const renamed = ctx.settings.event_name_map?.[event.event_type];
    return mapByType(handlers, renamed ?? event.event_type, event, ctx);
  },
};

function toDraft(e: AdaptyEvent, ctx: MapContext<Settings>, eventType: LedgerEventType): LedgerDraft {
  const p = e.event_properties ?? {};
  return subscriptionDraft({
    source: 'adapty',
    eventType,
    store: p.store,
    transactionId: p.transaction_id,
    originalTransactionId: p.original_transaction_id,
    attribute: (name) => e.user_attributes?.[name],
    installIdAttribute: ctx.settings.install_id_attribute,
    userIds: [e.customer_user_id, e.profile_id],
    // price_local is in `currency`; price_usd is the same price in USD. Both are null on free trials.
    paid: money(p.price_local, p.currency, p.price_usd),
    sandbox: e.viaSandboxSecret || p.environment === 'Sandbox',
    occurredAt: new Date(read(z.string(), e.event_datetime ?? p.purchase_date)),
  });
}
