import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCode, createDomain, createLink } from '../../helpers/attribution-fixtures';
import { createCreator } from '../../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { uniqueId } from '../public/setup';
import { brandWithSession, type Connection, connect, deliver, stripeSignature } from './helpers';

/**
 * One transaction reported twice (docs/webhooks.md): a public row (pixel, SDK) and a verified
 * one (a provider webhook). The verified row supersedes the public one; every total, feed and
 * list then counts the verified row only, with its own attribution.
 */
let t: TestService;
let brand: Awaited<ReturnType<typeof brandWithSession>>;
let stripe: Connection;
let code: { id: string; label: string };
let link: { id: number };
let installId: string;
const SECRET = 'whsec_test_supersede';

beforeAll(async () => {
  t = await startTestService();
  brand = await brandWithSession(t, 'Supersede');
  stripe = await connect(t, brand.cookie, { provider: 'stripe', signing_secret: SECRET });
  // The creator paid on commission owns the code; the app link belongs to another creator.
  const commissioned = await createCreator(t, { name: 'Carl Claim', first_name: 'Carl' });
  const other = await createCreator(t, { name: 'Maya Lopez', first_name: 'Maya' });
  const hostname = `${uniqueId('go')}.test`;
  const domain = await createDomain(t, { hostname, brand_id: brand.brandId });
  code = await createCode(t, { brand_id: brand.brandId, creator_id: commissioned.id, label: `CARL${Date.now() % 10_000}` });
  link = await createLink(t, { brand_id: brand.brandId, creator_id: other.id, domain_id: domain.id, slug: 'maya' });
  // An install credited to Maya's link through its click token: the webhook carries its install ID.
  const click = await t.request({ method: 'POST', url: '/api/public/attribution/clicks', payload: { domain: hostname, slug: 'maya' } });
  installId = crypto.randomUUID();
  const install = await t.request({
    method: 'POST',
    url: '/api/public/attribution/installs',
    payload: { pixel_key: brand.pixelKey, install_id: installId, platform: 'ios', clipboard_token: click.json().click_token },
  });
  expect(install.statusCode, install.body).toBe(201);
});
afterAll(async () => destroyTestService(t));

const publicEvent = async (body: Record<string, unknown>) => {
  const res = await t.request({ method: 'POST', url: '/api/public/attribution/events', payload: { pixel_key: brand.pixelKey, ...body } });
  return { status: res.statusCode, body: res.json() };
};
let seq = 0;
const stripeDelivery = (type: string, object: Record<string, unknown>) => {
  const body = JSON.stringify({ id: `evt_s${++seq}`, type, created: Math.floor(Date.now() / 1000), livemode: true, data: { object } });
  return deliver(t, stripe.webhook_url, body, { 'stripe-signature': stripeSignature(body, [SECRET]) });
};
const checkout = (id: string, amountTotal: number) =>
  stripeDelivery('checkout.session.completed', {
    id,
    mode: 'payment',
    payment_status: 'paid',
    amount_total: amountTotal,
    currency: 'usd',
    customer: 'cus_1',
    payment_intent: `pi_${id}`,
    metadata: { svc_install_id: installId },
  });
const portalGet = async (path: string) => {
  const res = await t.request({ method: 'GET', url: `/api/client/attribution${path}`, headers: { cookie: brand.cookie } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const internalGet = async (path: string) => {
  const res = await t.request({ method: 'GET', url: `/api/internal${path}`, admin: true });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const pgRows = (transactionId: string) =>
  t.services.db
    .selectFrom('ledger_events')
    .select(['id', 'event_type', 'amount', 'source', 'verified', 'supersedes', 'code_id', 'link_id', 'resolution_method'])
    .where('brand_id', '=', brand.brandId)
    .where('transaction_id', '=', transactionId)
    .orderBy('recorded_at')
    .execute();

describe('a verified row supersedes a public one', () => {
  it('the signed webhook of a pre-claimed checkout is recorded with its own attribution, and the public rows stop counting everywhere', async () => {
    // The probe: stripe:cs_99 claimed for 0.01 USD with the creator's code, and refunded publicly.
    expect(await publicEvent({ transaction_id: 'stripe:cs_99', amount: 0.01, currency: 'USD', code: code.label })).toEqual({ status: 200, body: { ok: true, duplicate: false } });
    expect(await publicEvent({ event_type: 'refund', transaction_id: 'stripe:cs_99', amount: 0.01 })).toEqual({ status: 200, body: { ok: true, duplicate: false } });
    await t.settle();
    expect((await portalGet('/codes')).data).toEqual([expect.objectContaining({ id: code.id, conversions: 1, revenue: { USD: 0 } })]);

    // Stripe's correctly signed webhook for that session: $2,500.
    expect(await checkout('cs_99', 250_000)).toEqual({ status: 200, body: { ok: true, recorded: 1, ignored: 0 } });
    await t.settle();

    const rows = await pgRows('stripe:cs_99');
    const claimed = rows.find((r) => r.event_type === 'purchase' && !r.verified)!;
    const refund = rows.find((r) => r.event_type === 'refund')!;
    const verified = rows.find((r) => r.event_type === 'purchase' && r.verified)!;
    // Both stay stored; the verified row names the public one, and is credited from its own payload (the install).
    expect(claimed).toMatchObject({ source: 'pixel', code_id: code.id, supersedes: null });
    expect(refund).toMatchObject({ source: 'pixel', code_id: code.id });
    expect(verified).toMatchObject({ source: 'stripe', supersedes: claimed.id, code_id: null, link_id: link.id, resolution_method: 'clipboard' });
    expect(Number(verified.amount)).toBe(2500);

    // Portal totals, feed, links and codes; the internal lists.
    const overview = await portalGet('/overview');
    expect(overview).toMatchObject({ conversions: 1, revenue: { USD: 2500 }, refunds: {} });
    expect(overview.daily.at(-1)).toMatchObject({ conversions: 1, revenue: { USD: 2500 } });
    const feed = (await portalGet('/events')).data as { id: string; transaction_id: string }[];
    expect(feed.filter((e) => e.transaction_id === 'stripe:cs_99').map((e) => e.id)).toEqual([verified.id]);
    expect((await portalGet('/codes')).data).toEqual([expect.objectContaining({ id: code.id, conversions: 0, revenue: {} })]);
    expect((await portalGet('/links')).data).toEqual([expect.objectContaining({ id: String(link.id), conversions: 1, revenue: { USD: 2500 } })]);
    expect((await internalGet(`/attribution-codes?brand_id=${brand.brandId}`)).data).toEqual([
      expect.objectContaining({ id: code.id, conversions: 0, revenue: {} }),
    ]);
    expect((await internalGet(`/attribution-links?brand_id=${brand.brandId}`)).data).toEqual([
      expect.objectContaining({ id: String(link.id), conversions: 1, revenue: { USD: 2500 } }),
    ]);

    // The same webhook again is a duplicate; so is the public purchase, and a public refund can no longer be made.
    expect(await checkout('cs_99', 250_000)).toEqual({ status: 200, body: { ok: true, recorded: 0, ignored: 1 } });
    expect(await publicEvent({ transaction_id: 'stripe:cs_99', amount: 0.01, code: code.label })).toEqual({ status: 200, body: { ok: true, duplicate: true } });
    expect((await pgRows('stripe:cs_99')).length).toBe(3);
  });

  it('a public event whose key a verified row already holds is a duplicate and changes nothing', async () => {
    expect(await checkout('cs_100', 1_000)).toEqual({ status: 200, body: { ok: true, recorded: 1, ignored: 0 } });
    expect(await publicEvent({ transaction_id: 'stripe:cs_100', amount: 0.01, code: code.label })).toEqual({ status: 200, body: { ok: true, duplicate: true } });
    // No public purchase of it counts: a public refund is refused.
    expect(await publicEvent({ event_type: 'refund', transaction_id: 'stripe:cs_100', amount: 1 })).toEqual({ status: 422, body: { error: 'invalid_refund' } });
    expect((await pgRows('stripe:cs_100')).map((r) => [r.event_type, r.verified])).toEqual([['purchase', true]]);
  });

  it('a webhook refund copies attribution only from rows that still count', async () => {
    expect((await publicEvent({ transaction_id: 'stripe:cs_101', amount: 5, code: code.label })).status).toBe(200);
    expect((await checkout('cs_101', 5_000)).body).toMatchObject({ recorded: 1 });
    // A refund of the session's payment intent with no attribution of its own.
    const refunded = await stripeDelivery('charge.refunded', { id: 'ch_101', amount_refunded: 5_000, currency: 'usd', payment_intent: 'pi_cs_101' });
    expect(refunded).toEqual({ status: 200, body: { ok: true, recorded: 1, ignored: 0 } });
    expect((await pgRows('stripe:ch_101:5000'))[0]).toMatchObject({ link_id: link.id, code_id: null, resolution_method: 'clipboard' });
  });
});
