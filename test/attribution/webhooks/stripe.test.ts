import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDomain, createLink } from '../../helpers/attribution-fixtures';
import { createCreator } from '../../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { brandWithSession, type Connection, connect, connectionOf, deliver, ledgerRow, ledgerRows, stripeSignature } from './helpers';

let t: TestService;
let brand: Awaited<ReturnType<typeof brandWithSession>>;
let stripe: Connection;
let clickToken: string;
let linkId: number;
const SECRET = 'whsec_test_5f2b7c9d1e';

beforeAll(async () => {
  t = await startTestService({ workers: false });
  brand = await brandWithSession(t);
  stripe = await connect(t, brand.cookie, { provider: 'stripe', signing_secret: SECRET });
  // A creator link and a click on it, as the redirect app would record it.
  const creator = await createCreator(t, { name: 'Maya Lopez', first_name: 'Maya' });
  const domain = await createDomain(t, { hostname: 'go.acme.test', brand_id: brand.brandId });
  linkId = (await createLink(t, { brand_id: brand.brandId, creator_id: creator.id, domain_id: domain.id, slug: 'maya' })).id;
  const click = await t.request({ method: 'POST', url: '/api/public/attribution/clicks', payload: { domain: 'go.acme.test', slug: 'maya' } });
  expect(click.statusCode, click.body).toBe(200);
  clickToken = click.json().click_token;
});
afterAll(async () => destroyTestService(t));

let seq = 0;
/** A Stripe Event as Stripe documents it. */
function stripeEvent(type: string, object: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  seq++;
  return JSON.stringify({ id: `evt_${seq}`, object: 'event', type, created: 1767225600, livemode: true, api_version: '2025-09-30.clover', data: { object }, ...extra });
}
const session = (fields: Record<string, unknown>) => ({
  id: `cs_test_${++seq}`,
  object: 'checkout.session',
  mode: 'payment',
  payment_status: 'paid',
  amount_total: 4900,
  currency: 'cad',
  customer: 'cus_R1',
  metadata: { svc_install_id: '3f2b9c1e-6a7d-4e21-9b55-0c7d8e9fa012' },
  ...fields,
});
const send = (body: string, signature = stripeSignature(body, [SECRET])) => deliver(t, stripe.webhook_url, body, { 'stripe-signature': signature });

describe('Stripe signatures', () => {
  const body = stripeEvent('customer.created', { id: 'cus_1' });

  it('accepts a valid signature; any v1 may match during a secret roll', async () => {
    expect(await send(body)).toEqual({ status: 200, body: { ok: true, recorded: 0, ignored: 1 } });
    expect((await send(body, stripeSignature(body, ['whsec_old_secret', SECRET]))).status).toBe(200);
    expect(await connectionOf(t, brand.cookie, stripe.id)).toMatchObject({ status: 'connected' });
  });

  it('refuses a bad signature with 401 signature_mismatch and marks the connection error', async () => {
    expect(await send(body, stripeSignature(body, ['whsec_wrong']))).toEqual({ status: 401, body: { error: 'signature_mismatch' } });
    expect(await connectionOf(t, brand.cookie, stripe.id)).toMatchObject({ status: 'error', last_error: 'signature_mismatch' });
    // The body is verified as sent: one byte changed is a mismatch.
    expect((await send(body.replace('cus_1', 'cus_2'), stripeSignature(body, [SECRET]))).status).toBe(401);
    expect((await send(body, '')).body).toEqual({ error: 'signature_missing' });
  });

  it('refuses a timestamp more than 300 s old or ahead, even when signed', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(await send(body, stripeSignature(body, [SECRET], now - 301))).toEqual({ status: 401, body: { error: 'timestamp_out_of_tolerance' } });
    expect((await send(body, stripeSignature(body, [SECRET], now + 301))).body).toEqual({ error: 'timestamp_out_of_tolerance' });
    expect(await connectionOf(t, brand.cookie, stripe.id)).toMatchObject({ status: 'error', last_error: 'timestamp_out_of_tolerance' });
    expect((await send(body, stripeSignature(body, [SECRET], now - 290))).status).toBe(200);
    expect(await connectionOf(t, brand.cookie, stripe.id)).toMatchObject({ status: 'connected', last_error: null });
  });

  it('holds the window to the timestamp that verified: a replayed delivery with a second t= or a spaced t= is refused', async () => {
    const now = Math.floor(Date.now() / 1000);
    const old = now - 3 * 86_400;
    const purchase = stripeEvent('checkout.session.completed', session({ id: `cs_replay_${now}` }));
    const signedThen = stripeSignature(purchase, [SECRET], old); // t=<old>,v1=<sig>
    const v1 = signedThen.slice(signedThen.indexOf(',') + 1);
    for (const header of [
      `t=${now},t=${old},${v1}`,
      ` t=${now},t=${old},${v1}`,
      `t=${old},t=${now},${v1}`,
      `t=${old},${v1}, t=${now}`,
      `t=${old},${v1},t=${old}`,
    ]) {
      const res = await send(purchase, header);
      expect(res.status, header).toBe(401);
      expect(await connectionOf(t, brand.cookie, stripe.id)).toMatchObject({ status: 'error' });
    }
    // One t, with or without a leading space, is held to the window.
    expect(await send(purchase, ` ${signedThen}`)).toEqual({ status: 401, body: { error: 'timestamp_out_of_tolerance' } });
    expect((await send(purchase, `t=${now},t=${old},${v1}`)).body).toEqual({ error: 'signature_timestamp_repeated' });
    expect((await ledgerRows(t, brand.brandId)).filter((r) => r.transaction_id === `cs_replay_${now}`)).toEqual([]);
    // The same delivery signed now is accepted.
    expect((await send(purchase)).status).toBe(200);
  });

  it('without a stored signing secret nothing verifies', async () => {
    const other = await brandWithSession(t, 'NoSecret');
    const c = await connect(t, other.cookie, { provider: 'stripe' });
    const res = await deliver(t, c.webhook_url, body, { 'stripe-signature': stripeSignature(body, [SECRET]) });
    expect(res).toEqual({ status: 401, body: { error: 'signing_secret_missing' } });
  });

  it('answers 422 for a signed body that is not a Stripe event', async () => {
    expect(await send('{"hello":"world"}')).toEqual({ status: 422, body: { error: 'unparseable_payload' } });
    expect((await send('not json')).status).toBe(422);
  });
});

describe('Stripe amounts (docs/webhooks.md, "Amounts")', () => {
  it('refuses amounts that are not integers in minor units JSON carried exactly, or beyond 1,000,000,000, never coercing them', async () => {
    const ids: string[] = [];
    // The body as Stripe would write it: 9007199254740993 is beyond what a double holds exactly.
    for (const amount_total of [1.5, 'EXACT:9007199254740993', '4900', 100_000_000_001]) {
      const s = session({ amount_total, currency: 'usd' });
      ids.push(`stripe:${s.id}`);
      const body = stripeEvent('checkout.session.completed', s).replace('"EXACT:9007199254740993"', '9007199254740993');
      expect(await send(body), String(amount_total)).toEqual({ status: 422, body: { error: 'unrecordable_values' } });
    }
    expect(await connectionOf(t, brand.cookie, stripe.id)).toMatchObject({ status: 'error', last_error: 'unrecordable_values' });
    const charge = { id: 'ch_frac', amount_refunded: 10.5, currency: 'usd', payment_intent: 'pi_frac' };
    expect((await send(stripeEvent('charge.refunded', charge))).body).toEqual({ error: 'unrecordable_values' });
    const invoice = { id: 'in_frac', billing_reason: 'subscription_cycle', amount_paid: 0.5, currency: 'usd' };
    expect((await send(stripeEvent('invoice.paid', invoice))).body).toEqual({ error: 'unrecordable_values' });
    expect(await t.services.db.selectFrom('ledger_events').select('id').where('transaction_id', 'in', [...ids, 'stripe:in_frac']).execute()).toEqual([]);
    // The bound itself is recorded.
    const edge = session({ amount_total: 100_000_000_000, currency: 'usd' });
    expect((await send(stripeEvent('checkout.session.completed', edge))).body).toMatchObject({ recorded: 1 });
    expect((await ledgerRow(t, brand.brandId, 'purchase', `stripe:${edge.id}`)).amount).toBe('1000000000.0000');
  });
});

describe('Stripe mapping', () => {
  it('checkout.session.completed (paid) → purchase; the click token in client_reference_id credits the link', async () => {
    const s = session({ client_reference_id: clickToken, payment_intent: 'pi_100' });
    const body = stripeEvent('checkout.session.completed', s, { livemode: false });
    expect(await send(body)).toEqual({ status: 200, body: { ok: true, recorded: 1, ignored: 0 } });
    expect(await send(body)).toEqual({ status: 200, body: { ok: true, recorded: 0, ignored: 1 } });
    const row = await ledgerRow(t, brand.brandId, 'purchase', `stripe:${s.id}`);
    expect(row).toMatchObject({
      amount: '49.0000',
      currency: 'CAD',
      source: 'stripe',
      sandbox: true,
      external_user_id: '3f2b9c1e-6a7d-4e21-9b55-0c7d8e9fa012',
      resolution_method: 'click',
      link_id: linkId,
      click_token: clickToken,
    });
    expect(row.occurred_at.toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });

  it('charge.refunded → a refund for the newly refunded amount, copying the session\'s attribution', async () => {
    const charge = { id: 'ch_100', object: 'charge', amount: 4900, amount_refunded: 1000, currency: 'cad', customer: 'cus_R1', payment_intent: 'pi_100' };
    expect((await send(stripeEvent('charge.refunded', charge, { data: { object: charge, previous_attributes: { amount_refunded: 0 } } }))).body).toMatchObject({ recorded: 1 });
    const second = { ...charge, amount_refunded: 4900 };
    await send(stripeEvent('charge.refunded', second, { data: { object: second, previous_attributes: { amount_refunded: 1000 } } }));
    const first = await ledgerRow(t, brand.brandId, 'refund', 'stripe:ch_100:1000');
    expect(first).toMatchObject({ amount: '-10.0000', currency: 'CAD', resolution_method: 'click', link_id: linkId });
    expect(await ledgerRow(t, brand.brandId, 'refund', 'stripe:ch_100:4900')).toMatchObject({ amount: '-39.0000', link_id: linkId });
  });

  it('subscription trial → trial; unpaid → ignored until async_payment_succeeded', async () => {
    const trial = session({ mode: 'subscription', payment_status: 'no_payment_required', amount_total: 0 });
    await send(stripeEvent('checkout.session.completed', trial));
    expect(await ledgerRow(t, brand.brandId, 'trial', `stripe:${trial.id}`)).toMatchObject({ amount: '0.0000' });
    const unpaid = session({ payment_status: 'unpaid', currency: 'eur', amount_total: 1999 });
    expect((await send(stripeEvent('checkout.session.completed', unpaid))).body).toEqual({ ok: true, recorded: 0, ignored: 1 });
    await send(stripeEvent('checkout.session.async_payment_succeeded', { ...unpaid, payment_status: 'paid' }));
    expect(await ledgerRow(t, brand.brandId, 'purchase', `stripe:${unpaid.id}`)).toMatchObject({ amount: '19.9900', currency: 'EUR' });
  });

  it('invoice.paid subscription_cycle → renewal with the subscription metadata; subscription_create is ignored', async () => {
    const subscriptionSession = session({ mode: 'subscription', invoice: 'in_first', client_reference_id: clickToken });
    await send(stripeEvent('checkout.session.completed', subscriptionSession));
    const first = {
      id: 'in_first',
      object: 'invoice',
      billing_reason: 'subscription_create',
      amount_paid: 4900,
      currency: 'cad',
      customer: 'cus_R1',
      payment_intent: 'pi_first',
      status_transitions: { paid_at: 1767225700 },
    };
    expect((await send(stripeEvent('invoice.paid', first))).body).toEqual({ ok: true, recorded: 0, ignored: 1 });
    const cycle = {
      ...first,
      id: 'in_cycle',
      billing_reason: 'subscription_cycle',
      payment_intent: 'pi_cycle',
      status_transitions: { paid_at: 1769904000 },
      parent: { subscription_details: { subscription: 'sub_1', metadata: { svc_install_id: 'install-77' } } },
    };
    expect((await send(stripeEvent('invoice.paid', cycle))).body).toMatchObject({ recorded: 1 });
    const renewal = await ledgerRow(t, brand.brandId, 'renewal', 'stripe:in_cycle');
    expect(renewal).toMatchObject({ amount: '49.0000', currency: 'CAD', external_user_id: 'install-77' });
    expect(renewal.occurred_at.toISOString()).toBe('2026-02-01T00:00:00.000Z');
    // A refund of the first invoice's charge follows payment intent → invoice → session.
    const charge = { id: 'ch_first', amount_refunded: 4900, currency: 'cad', payment_intent: 'pi_first' };
    await send(stripeEvent('charge.refunded', charge));
    expect(await ledgerRow(t, brand.brandId, 'refund', 'stripe:ch_first:4900')).toMatchObject({ amount: '-49.0000', link_id: linkId });
  });

  it('first_invoice_as_purchase records subscription_create as the purchase', async () => {
    const other = await brandWithSession(t, 'NoCheckout');
    const c = await connect(t, other.cookie, { provider: 'stripe', signing_secret: SECRET, settings: { first_invoice_as_purchase: true } });
    const body = stripeEvent('invoice.paid', { id: 'in_x', billing_reason: 'subscription_create', amount_paid: 999, currency: 'usd', customer: 'cus_9' });
    expect((await deliver(t, c.webhook_url, body, { 'stripe-signature': stripeSignature(body, [SECRET]) })).body).toMatchObject({ recorded: 1 });
    expect(await ledgerRow(t, other.brandId, 'purchase', 'stripe:in_x')).toMatchObject({ amount: '9.9900', external_user_id: 'cus_9' });
  });

  it('zero-decimal and unsupported currencies keep the number and the USD label', async () => {
    const yen = session({ currency: 'jpy', amount_total: 980 });
    const sek = session({ currency: 'sek', amount_total: 9900 });
    await send(stripeEvent('checkout.session.completed', yen));
    await send(stripeEvent('checkout.session.completed', sek));
    expect(await ledgerRow(t, brand.brandId, 'purchase', `stripe:${yen.id}`)).toMatchObject({ amount: '980.0000', currency: 'USD' });
    expect(await ledgerRow(t, brand.brandId, 'purchase', `stripe:${sek.id}`)).toMatchObject({ amount: '99.0000', currency: 'USD' });
  });

  it('ignores other event types and invoices of other billing reasons', async () => {
    const before = (await ledgerRows(t, brand.brandId)).length;
    for (const [type, object] of [
      ['charge.succeeded', { id: 'ch_9', amount: 100 }],
      ['payment_intent.succeeded', { id: 'pi_9' }],
      ['refund.created', { id: 're_9', amount: 100, charge: 'ch_9' }],
      ['invoice.paid', { id: 'in_9', billing_reason: 'manual', amount_paid: 100, currency: 'usd' }],
      ['invoice.paid', { id: 'in_10', billing_reason: 'subscription_cycle', amount_paid: 0, currency: 'usd' }],
    ] as const) {
      expect((await send(stripeEvent(type, object))).body, type).toEqual({ ok: true, recorded: 0, ignored: 1 });
    }
    expect((await ledgerRows(t, brand.brandId)).length).toBe(before);
  });
});
