import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { header, signedDelivery } from '../authenticity';
import { type Connector, type Handlers, ignored, type MapContext, mapByType, rows, unauthenticated, unparseable } from '../connector';
import {
  clickToken,
  dateString,
  decimalAmount,
  money,
  parseJsonKeepingBigIntegers,
  read,
  refundAmount,
  transactionKey,
  userId,
} from '../mapping';

/**
 * Shopify (docs/webhooks.md#what-each-provider-records): webhooks created in the admin, signed with the shop's key.
 * Accepted topics and the choices where Shopify's documentation is silent: docs/webhooks.md.
 */

export const shopifySettings = z.strictObject({
  /** `<shop>.myshopify.com`: when set, X-Shopify-Shop-Domain must name it. */
  shop_domain: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z0-9][a-z0-9-]*\.myshopify\.com$/, 'the shop domain, <shop>.myshopify.com')
    .optional(),
});
type Settings = z.output<typeof shopifySettings>;

type ShopifyEvent = { topic: string; body: unknown };

const id = z.union([z.string(), z.number()]).transform(String);

const order = z.looseObject({
  id,
  admin_graphql_api_id: z.string().nullish(),
  // Decimal text in the shop's currency: read by decimalAmount, never coerced.
  total_price: z.unknown(),
  currency: z.string().nullish(),
  financial_status: z.string().nullish(),
  test: z.boolean().nullish(),
  processed_at: dateString.nullish(),
  created_at: dateString.nullish(),
  customer: z.looseObject({ id }).nullish(),
  note_attributes: z.array(z.looseObject({ name: z.string(), value: z.unknown() })).nullish(),
  landing_site: z.string().nullish(),
  discount_codes: z.array(z.looseObject({ code: z.string() })).nullish(),
});
type Order = z.output<typeof order>;

const refund = z.looseObject({
  id,
  admin_graphql_api_id: z.string().nullish(),
  order_id: id,
  created_at: dateString,
  transactions: z
    .array(
      z.looseObject({
        kind: z.string().nullish(),
        status: z.string().nullish(),
        amount: z.unknown(),
        currency: z.string().nullish(),
        test: z.boolean().nullish(),
      }),
    )
    .default([]),
});

const paidOrder = async (e: ShopifyEvent, ctx: MapContext<Settings>) => {
  const o = read(order, e.body);
  const notes = noteAttributes(o);
  const paid = money(decimalAmount(o.total_price), o.currency);
  return rows({
    eventType: 'purchase',
    transactionId: transactionKey('shopify', 'order', shopifyId(o.admin_graphql_api_id, o.id)),
    externalUserId: userId(notes.get('svc_install_id'), o.customer?.id),
    amount: paid.amount,
    currency: paid.currency,
    source: 'shopify',
    clickToken: clickToken(notes.get('svc_cid'), landingSiteToken(o.landing_site)),
    code: await ctx.firstActiveCode((o.discount_codes ?? []).map((d) => d.code)),
    sandbox: o.test === true,
    occurredAt: new Date(read(z.string(), o.processed_at ?? o.created_at)),
  });
};

const handlers: Handlers<ShopifyEvent, Settings> = {
  'orders/paid': paidOrder,
  'orders/create': (e, ctx) =>
    read(order, e.body).financial_status === 'paid' ? paidOrder(e, ctx) : ignored('order not paid yet'),
  // Each refund (partial ones too) is its own delivery; restocks without money are ignored.
  'refunds/create': (e) => {
    const r = read(refund, e.body);
    const refundTransactions = r.transactions.filter((t) => t.kind === 'refund' && t.status === 'success');
    const total = refundTransactions.reduce((sum, t) => sum + decimalAmount(t.amount), 0);
    if (!(total > 0)) return ignored('refund without money');
    const refunded = money(total, refundTransactions[0]?.currency);
    return rows({
      eventType: 'refund',
      transactionId: transactionKey('shopify', 'refund', shopifyId(r.admin_graphql_api_id, r.id)),
      externalUserId: null,
      amount: refundAmount(refunded.amount),
      currency: refunded.currency,
      source: 'shopify',
      clickToken: null,
      code: null,
      sandbox: refundTransactions.some((t) => t.test === true),
      occurredAt: new Date(r.created_at),
      refundOf: [transactionKey('shopify', 'order', r.order_id)],
    });
  },
};

export const shopify: Connector<Settings, Buffer, ShopifyEvent> = {
  provider: 'shopify',
  settingsSchema: shopifySettings,

  async authenticate(delivery, connection) {
    const { secret, sent } = signedDelivery(delivery.headers, connection.signingSecret, 'x-shopify-hmac-sha256');
    const expected = createHmac('sha256', secret).update(delivery.body).digest();
    const given = Buffer.from(sent, 'base64');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw unauthenticated('signature_mismatch');
    const shop = connection.settings.shop_domain;
    if (shop && header(delivery.headers, 'x-shopify-shop-domain')?.trim().toLowerCase() !== shop) {
      throw unauthenticated('shop_domain_mismatch');
    }
    return delivery.body;
  },

  // The body does not name its topic; the X-Shopify-Topic header does.
  parse(body, delivery) {
    const topic = header(delivery.headers, 'x-shopify-topic')?.trim();
    if (!topic) throw unparseable('topic_missing');
    return [{ topic, body: parseJsonKeepingBigIntegers(body) }];
  },

  map: (event, ctx) => mapByType(handlers, event.topic, event, ctx),
};

/** The numeric ID at the end of `gid://shopify/Order/5523000000001`, else the (losslessly parsed) id. */
function shopifyId(gid: string | null | undefined, fallback: string): string {
  return /\/(\d+)$/.exec(gid ?? '')?.[1] ?? fallback;
}

/** Cart attributes, set by our storefront snippet (svc_cid) or the app (svc_install_id). */
function noteAttributes(o: Order): Map<string, unknown> {
  return new Map((o.note_attributes ?? []).map((a) => [a.name, a.value]));
}

/** `svc_cid` in the query of the landing page (path and query; null for draft, POS and API orders). */
function landingSiteToken(landingSite: string | null | undefined): string | null {
  if (!landingSite) return null;
  try {
    return new URL(landingSite, 'https://shop.invalid').searchParams.get('svc_cid');
  } catch {
    return null;
  }
}
