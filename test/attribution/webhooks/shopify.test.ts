import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCode, createDomain, createLink } from '../../helpers/attribution-fixtures';
import { createCreator } from '../../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { brandWithSession, type Connection, connect, connectionOf, deliver, ledgerRow, shopifyHmac } from './helpers';

let t: TestService;
let brand: Awaited<ReturnType<typeof brandWithSession>>;
let shopify: Connection;
let creatorId: string;
let linkId: number;
let clickToken: string;
const KEY = 'shop-webhook-key-0f9e8d';
const SHOP = 'acme-store.myshopify.com';

beforeAll(async () => {
  t = await startTestService({ workers: false });
  brand = await brandWithSession(t);
  shopify = await connect(t, brand.cookie, { provider: 'shopify', signing_secret: KEY, settings: { shop_domain: 'Acme-Store.myshopify.com' } });
  creatorId = (await createCreator(t, { name: 'Maya Lopez', first_name: 'Maya' })).id;
  await createCode(t, { brand_id: brand.brandId, creator_id: creatorId, label: 'MAYA10' });
  const domain = await createDomain(t, { hostname: 'go.acme.test', brand_id: brand.brandId });
  linkId = (await createLink(t, { brand_id: brand.brandId, creator_id: creatorId, domain_id: domain.id, slug: 'maya' })).id;
  const click = await t.request({ method: 'POST', url: '/api/public/attribution/clicks', payload: { domain: 'go.acme.test', slug: 'maya' } });
  clickToken = click.json().click_token;
});
afterAll(async () => destroyTestService(t));

/** A REST-shaped order as Shopify sends it. */
const order = (id: string, fields: Record<string, unknown> = {}) =>
  JSON.stringify({
    id: Number(id),
    admin_graphql_api_id: `gid://shopify/Order/${id}`,
    test: false,
    financial_status: 'paid',
    total_price: '64.00',
    currency: 'AUD',
    processed_at: '2026-01-01T21:18:40+11:00',
    customer: { id: 7011000000002 },
    landing_site: '/products/serum?utm_source=ig',
    note_attributes: [],
    discount_codes: [],
    ...fields,
  });
const send = (body: string, topic = 'orders/paid', headers: Record<string, string> = {}) =>
  deliver(t, shopify.webhook_url, body, {
    'x-shopify-hmac-sha256': shopifyHmac(body, KEY),
    'x-shopify-topic': topic,
    'x-shopify-shop-domain': SHOP,
    ...headers,
  });

describe('Shopify authentication', () => {
  it('refuses a bad HMAC or another shop with 401 and marks the connection error', async () => {
    const body = order('5523000000001');
    expect(await send(body, 'orders/paid', { 'x-shopify-hmac-sha256': shopifyHmac(body, 'other-key') })).toEqual({
      status: 401,
      body: { error: 'signature_mismatch' },
    });
    expect((await send(body, 'orders/paid', { 'x-shopify-hmac-sha256': 'bm90LWEtc2lnbmF0dXJl' })).status).toBe(401);
    expect(await send(body, 'orders/paid', { 'x-shopify-shop-domain': 'evil.myshopify.com' })).toEqual({
      status: 401,
      body: { error: 'shop_domain_mismatch' },
    });
    expect(await connectionOf(t, brand.cookie, shopify.id)).toMatchObject({ status: 'error', last_error: 'shop_domain_mismatch' });
  });

  it('answers 422 for a signed body that cannot be read, or without a topic', async () => {
    expect(await send('<order/>')).toEqual({ status: 422, body: { error: 'unparseable_payload' } });
    expect((await send(order('1'), '')).body).toEqual({ error: 'topic_missing' });
    expect((await send(JSON.stringify({ id: 1 }))).status).toBe(422);
  });

  it('answers 422 for a date or an amount the ledger cannot hold or a NUL or lone surrogate in a value, and records nothing of it', async () => {
    const yearZero = order('5523000000090', { processed_at: '0000-01-01T00:00:00Z' });
    expect(await send(yearZero)).toEqual({ status: 422, body: { error: 'unrecordable_values' } });
    expect(await connectionOf(t, brand.cookie, shopify.id)).toMatchObject({ status: 'error', last_error: 'unrecordable_values' });
    const nul = order('5523000000091', { note_attributes: [{ name: 'svc_install_id', value: 'a\u0000b' }] });
    expect((await send(nul)).status).toBe(422);
    // A lone UTF-16 surrogate: JSON.stringify writes it as the escape \ud800.
    const surrogate = order('5523000000093', { note_attributes: [{ name: 'svc_install_id', value: '\ud800b' }] });
    expect(await send(surrogate)).toEqual({ status: 422, body: { error: 'unrecordable_values' } });
    // In a discount code, which mapping looks up among the brand's codes before any row is made.
    const nulCode = order('5523000000094', { discount_codes: [{ code: 'MA\u0000YA' }] });
    expect(await send(nulCode)).toEqual({ status: 422, body: { error: 'unrecordable_values' } });
    const huge = order('5523000000092', { total_price: '100000000000000000000.00' });
    expect(await send(huge)).toEqual({ status: 422, body: { error: 'unrecordable_values' } });
    const rows = await t.services.db
      .selectFrom('ledger_events')
      .select('id')
      .where('transaction_id', 'in', ['shopify:order:5523000000090', 'shopify:order:5523000000091', 'shopify:order:5523000000092', 'shopify:order:5523000000093', 'shopify:order:5523000000094'])
      .execute();
    expect(rows).toEqual([]);
  });

  it('refuses amounts beyond 1,000,000,000 and totals that are not decimal text ("", "0x10"), never coercing them; records the bound itself', async () => {
    const probes: [string, unknown][] = [
      ['5523000000100', ''],
      ['5523000000101', '0x10'],
      ['5523000000102', '1e3'],
      ['5523000000103', '1000000000.01'],
      ['5523000000104', ' 5'],
      ['5523000000105', null],
    ];
    for (const [id, total] of probes) {
      expect(await send(order(id, { total_price: total })), JSON.stringify(total)).toEqual({ status: 422, body: { error: 'unrecordable_values' } });
    }
    expect(await connectionOf(t, brand.cookie, shopify.id)).toMatchObject({ status: 'error', last_error: 'unrecordable_values' });
    // A refund's transaction amounts likewise.
    const refund = JSON.stringify({ id: 9001, order_id: 5523000000100, created_at: '2026-01-02T00:00:00Z', transactions: [{ kind: 'refund', status: 'success', amount: '0x10', currency: 'AUD' }] });
    expect(await send(refund, 'refunds/create')).toEqual({ status: 422, body: { error: 'unrecordable_values' } });
    const ids = probes.map(([id]) => `shopify:order:${id}`);
    expect(await t.services.db.selectFrom('ledger_events').select('id').where('transaction_id', 'in', ids).execute()).toEqual([]);
    expect(await send(order('5523000000106', { total_price: '1000000000.00' }))).toEqual({ status: 200, body: { ok: true, recorded: 1, ignored: 0 } });
    expect(Number((await ledgerRow(t, brand.brandId, 'purchase', 'shopify:order:5523000000106')).amount)).toBe(1_000_000_000);
  });
});

describe('Shopify mapping', () => {
  it('orders/paid → purchase in the shop currency; a test order is sandbox and connects', async () => {
    const body = order('5523000000001', {
      test: true,
      note_attributes: [{ name: 'svc_install_id', value: 'install-1' }],
      discount_codes: [{ code: 'WELCOME5', amount: '3.20', type: 'fixed_amount' }, { code: 'maya10', amount: '6.40', type: 'percentage' }],
    });
    expect(await send(body)).toEqual({ status: 200, body: { ok: true, recorded: 1, ignored: 0 } });
    expect(await send(body, 'orders/create')).toEqual({ status: 200, body: { ok: true, recorded: 0, ignored: 1 } });
    const row = await ledgerRow(t, brand.brandId, 'purchase', 'shopify:order:5523000000001');
    expect(row).toMatchObject({ amount: '64.0000', currency: 'AUD', sandbox: true, external_user_id: 'install-1', code_label: 'MAYA10', creator_id: creatorId });
    expect(row.occurred_at.toISOString()).toBe('2026-01-01T10:18:40.000Z');
    expect(await connectionOf(t, brand.cookie, shopify.id)).toMatchObject({ status: 'connected', last_error: null });
  });

  it('keeps IDs beyond 2^53 exact (the admin sample order)', async () => {
    const raw = order('820982911946154508').replace(/"admin_graphql_api_id":"[^"]*",/, '');
    expect(raw).toContain('"id":820982911946154500'); // what JSON.stringify made of the number
    const exact = raw.replace('"id":820982911946154500', '"id":820982911946154508');
    await send(exact);
    await ledgerRow(t, brand.brandId, 'purchase', 'shopify:order:820982911946154508');
  });

  it('unpaid orders/create and other topics are ignored; a paid orders/create is a purchase', async () => {
    expect((await send(order('5523000000002', { financial_status: 'pending' }), 'orders/create')).body).toMatchObject({ ignored: 1 });
    for (const topic of ['orders/cancelled', 'orders/fulfilled', 'orders/updated', 'products/update']) {
      expect((await send(order('5523000000003'), topic)).body, topic).toEqual({ ok: true, recorded: 0, ignored: 1 });
    }
    expect((await send(order('5523000000004', { currency: 'NZD' }), 'orders/create')).body).toMatchObject({ recorded: 1 });
    expect(await ledgerRow(t, brand.brandId, 'purchase', 'shopify:order:5523000000004')).toMatchObject({ currency: 'USD', amount: '64.0000', external_user_id: '7011000000002' });
  });

  it('refunds/create → refund of the successful refund transactions, copying the order\'s attribution', async () => {
    const refund = (id: string, transactions: Record<string, unknown>[]) =>
      JSON.stringify({ id: Number(id), order_id: 5523000000001, created_at: '2026-01-03T09:00:00-05:00', transactions });
    const body = refund('9120000000001', [
      { kind: 'refund', status: 'success', amount: '12.00', currency: 'AUD', test: true },
      { kind: 'refund', status: 'failure', amount: '50.00', currency: 'AUD', test: true },
    ]);
    expect((await send(body, 'refunds/create')).body).toMatchObject({ recorded: 1 });
    const row = await ledgerRow(t, brand.brandId, 'refund', 'shopify:refund:9120000000001');
    expect(row).toMatchObject({ amount: '-12.0000', currency: 'AUD', sandbox: true, code_label: 'MAYA10', creator_id: creatorId });
    expect(row.occurred_at.toISOString()).toBe('2026-01-03T14:00:00.000Z');
    expect((await send(refund('9120000000002', []), 'refunds/create')).body).toEqual({ ok: true, recorded: 0, ignored: 1 });
  });

  it('reads the click token from the cart attribute, else from landing_site', async () => {
    await send(order('5523000000005', { note_attributes: [{ name: 'svc_cid', value: clickToken }], landing_site: null }));
    await send(order('5523000000006', { landing_site: `/products/serum?svc_cid=${clickToken}&utm_source=ig` }));
    for (const id of ['5523000000005', '5523000000006']) {
      expect(await ledgerRow(t, brand.brandId, 'purchase', `shopify:order:${id}`)).toMatchObject({ resolution_method: 'click', link_id: linkId });
    }
  });
});
