import Stripe from 'stripe';
import { z } from 'zod';
import type { LedgerDraft, LedgerEventType } from '../../ledger/types';
import { signedDelivery } from '../authenticity';
import { type Connector, type Handlers, ignored, type LedgerReference, mapByType, type Mapped, unauthenticated } from '../connector';
import {
  clickToken,
  fromEpochSeconds,
  minorUnits,
  money,
  optionalKey,
  parseJson,
  read,
  refundAmount,
  refundTargets,
  text,
  transactionKey,
  userId,
} from '../mapping';

/**
 * Stripe (docs/webhooks.md#what-each-provider-records), verified by the official `stripe` package on the raw bytes.
 * The choices where Stripe's documentation is silent: docs/webhooks.md.
 */

const TOLERANCE_SECONDS = 300;

export const stripeSettings = z.strictObject({
  first_invoice_as_purchase: z.boolean().default(false),
});
type Settings = z.output<typeof stripeSettings>;

const stripeEvent = z.looseObject({
  id: z.string(),
  type: z.string(),
  created: z.number(),
  livemode: z.boolean(),
  data: z.looseObject({
    object: z.record(z.string(), z.unknown()),
    previous_attributes: z.record(z.string(), z.unknown()).nullish(),
  }),
});
type StripeEvent = z.output<typeof stripeEvent>;

/** An ID field that the API may also send expanded as an object. */
const expandable = z.union([z.string(), z.looseObject({ id: z.string() }).transform((o) => o.id)]).nullish();
const metadata = z.record(z.string(), z.unknown()).nullish();

const checkoutSession = z.looseObject({
  id: z.string(),
  mode: z.string().nullish(),
  payment_status: z.string().nullish(),
  // Amounts are integers in the currency's smallest unit: read by minorUnits, never coerced.
  amount_total: z.unknown(),
  currency: z.string().nullish(),
  client_reference_id: z.string().nullish(),
  customer: expandable,
  payment_intent: expandable,
  invoice: expandable,
  metadata,
});
type CheckoutSession = z.output<typeof checkoutSession>;

const invoice = z.looseObject({
  id: z.string(),
  billing_reason: z.string().nullish(),
  amount_paid: z.unknown().transform(minorUnits),
  currency: z.string(),
  customer: expandable,
  status_transitions: z.looseObject({ paid_at: z.number().nullish() }).nullish(),
  // API versions before 2025-03-31 name the payment on the invoice; newer ones list payments.
  payment_intent: expandable,
  charge: expandable,
  payments: z
    .looseObject({
      data: z.array(z.looseObject({ payment: z.looseObject({ payment_intent: expandable, charge: expandable }).nullish() })),
    })
    .nullish(),
  // Subscription metadata: `parent.subscription_details` on newer API versions, top level on older.
  parent: z.looseObject({ subscription_details: z.looseObject({ metadata }).nullish() }).nullish(),
  subscription_details: z.looseObject({ metadata }).nullish(),
});
type Invoice = z.output<typeof invoice>;

const charge = z.looseObject({
  id: z.string(),
  amount_refunded: z.unknown().transform(minorUnits),
  currency: z.string(),
  customer: expandable,
  payment_intent: expandable,
  invoice: expandable,
  metadata,
});

const handlers: Handlers<StripeEvent, Settings> = {
  'checkout.session.completed': (e) => {
    const session = read(checkoutSession, e.data.object);
    if (session.payment_status === 'paid') return sessionRow(e, session, 'purchase');
    if (session.payment_status === 'no_payment_required' && session.mode === 'subscription') {
      return sessionRow(e, session, 'trial');
    }
    // `unpaid`: a delayed payment method; checkout.session.async_payment_succeeded follows.
    return ignored(`checkout session ${session.payment_status}`);
  },
  'checkout.session.async_payment_succeeded': (e) => sessionRow(e, read(checkoutSession, e.data.object), 'purchase'),

  'invoice.paid': (e, ctx) => {
    const inv = read(invoice, e.data.object);
    const transactionId = transactionKey('stripe', inv.id);
    const references = paymentsOf(inv).map((key) => ({ key, transactionId }));
    if (inv.amount_paid <= 0) return ignored('invoice without a charge', references);
    if (inv.billing_reason === 'subscription_cycle') return { rows: [invoiceDraft(e, inv, 'renewal')], references };
    if (inv.billing_reason === 'subscription_create' && ctx.settings.first_invoice_as_purchase) {
      return { rows: [invoiceDraft(e, inv, 'purchase')], references };
    }
    return ignored(`invoice ${inv.billing_reason}`, references);
  },

  // One event per refund of a charge; each carries the charge's cumulative amount_refunded.
  'charge.refunded': (e) => {
    const c = read(charge, e.data.object);
    const before = minorUnits(e.data.previous_attributes?.amount_refunded ?? 0);
    const refunded = stripeMoney(c.amount_refunded - before, c.currency);
    if (refunded.amount <= 0) return ignored('no newly refunded amount');
    const draft: LedgerDraft = {
      eventType: 'refund',
      transactionId: transactionKey('stripe', c.id, String(c.amount_refunded)),
      externalUserId: userId(c.metadata?.svc_install_id, c.customer),
      amount: refundAmount(refunded.amount),
      currency: refunded.currency,
      source: 'stripe',
      clickToken: clickToken(c.metadata?.svc_cid),
      code: text(c.metadata?.svc_code),
      sandbox: !e.livemode,
      occurredAt: fromEpochSeconds(e.created),
      refundOf: refundTargets(optionalKey('stripe', c.payment_intent), optionalKey('stripe', c.invoice), transactionKey('stripe', c.id)),
    };
    return { rows: [draft] };
  },
};

/**
 * `Stripe-Signature` read once, here: its one `t` (several are refused) and a header rebuilt from
 * it for the library, so the timestamp held to the window is the one that verified
 * (docs/hardening.md).
 */
function signatureHeader(sent: string): { signedAt: number; canonical: string } {
  const pairs = sent.split(',').map((item) => {
    const eq = item.indexOf('=');
    return eq < 0 ? ['', ''] : [item.slice(0, eq).trim(), item.slice(eq + 1).trim()];
  });
  const timestamps = pairs.filter(([key]) => key === 't').map(([, value]) => value!);
  if (timestamps.length > 1) throw unauthenticated('signature_timestamp_repeated');
  const t = timestamps[0];
  if (t === undefined || !/^\d{1,12}$/.test(t)) throw unauthenticated('signature_mismatch');
  const v1 = pairs.filter(([key]) => key === 'v1').map(([, value]) => `,v1=${value}`);
  return { signedAt: Number(t), canonical: `t=${t}${v1.join('')}` };
}

export const stripe: Connector<Settings, Buffer, StripeEvent> = {
  provider: 'stripe',
  settingsSchema: stripeSettings,

  async authenticate(delivery, connection) {
    const { secret, sent } = signedDelivery(delivery.headers, connection.signingSecret, 'stripe-signature');
    const { signedAt, canonical } = signatureHeader(sent);
    try {
      Stripe.webhooks.signature!.verifyHeader(delivery.body, canonical, secret, 0);
    } catch {
      throw unauthenticated('signature_mismatch');
    }
    if (Math.abs(delivery.receivedAt.getTime() / 1000 - signedAt) > TOLERANCE_SECONDS) {
      throw unauthenticated('timestamp_out_of_tolerance');
    }
    return delivery.body;
  },

  parse(body) {
    return [read(stripeEvent, parseJson(body))];
  },

  map: (event, ctx) => mapByType(handlers, event.type, event, ctx),
};

function sessionRow(e: StripeEvent, s: CheckoutSession, eventType: LedgerEventType): Mapped {
  const transactionId = transactionKey('stripe', s.id);
  const paid = stripeMoney(s.amount_total == null ? 0 : minorUnits(s.amount_total), s.currency ?? 'usd');
  const ownReference = clickToken(s.client_reference_id) ? null : s.client_reference_id;
  const references: LedgerReference[] = [optionalKey('stripe', s.payment_intent), optionalKey('stripe', s.invoice)]
    .filter((key): key is string => key !== null)
    .map((key) => ({ key, transactionId }));
  const draft: LedgerDraft = {
    eventType,
    transactionId,
    externalUserId: userId(s.metadata?.svc_install_id, ownReference, s.customer),
    amount: eventType === 'trial' ? 0 : paid.amount,
    currency: paid.currency,
    source: 'stripe',
    clickToken: clickToken(s.client_reference_id, s.metadata?.svc_cid),
    code: text(s.metadata?.svc_code),
    sandbox: !e.livemode,
    occurredAt: fromEpochSeconds(e.created),
  };
  return { rows: [draft], references };
}

function invoiceDraft(e: StripeEvent, inv: Invoice, eventType: LedgerEventType): LedgerDraft {
  const meta = inv.parent?.subscription_details?.metadata ?? inv.subscription_details?.metadata;
  const paid = stripeMoney(inv.amount_paid, inv.currency);
  return {
    eventType,
    transactionId: transactionKey('stripe', inv.id),
    externalUserId: userId(meta?.svc_install_id, inv.customer),
    amount: paid.amount,
    currency: paid.currency,
    source: 'stripe',
    clickToken: clickToken(meta?.svc_cid),
    code: text(meta?.svc_code),
    sandbox: !e.livemode,
    occurredAt: fromEpochSeconds(inv.status_transitions?.paid_at ?? e.created),
  };
}

/** The payment intents and charges that paid an invoice, as reference keys. */
function paymentsOf(inv: Invoice): string[] {
  const listed = inv.payments?.data.flatMap((p) => [p.payment?.payment_intent, p.payment?.charge]) ?? [];
  return [inv.payment_intent, inv.charge, ...listed].map((id) => optionalKey('stripe', id)).filter((k): k is string => k !== null);
}

// Stripe amounts are in the currency's smallest unit.
const ZERO_DECIMAL = new Set(['BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF']);
const THREE_DECIMAL = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);

function stripeMoney(minor: number, currency: string) {
  const upper = currency.toUpperCase();
  const exponent = ZERO_DECIMAL.has(upper) ? 0 : THREE_DECIMAL.has(upper) ? 3 : 2;
  return money(minor / 10 ** exponent, upper);
}
