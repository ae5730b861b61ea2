import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCode } from '../../helpers/attribution-fixtures';
import { createCreator } from '../../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { brandWithSession, type Connection, connect, connectionOf, deliver, ledgerRow, ledgerRows } from './helpers';

let t: TestService;
let brand: Awaited<ReturnType<typeof brandWithSession>>;
let rc: Connection;
const SECRET = 'rc-auth-6f1d2c';
const INSTALL_ID = '3f2b9c1e-6a7d-4e21-9b55-0c7d8e9fa012';

beforeAll(async () => {
  t = await startTestService();
  brand = await brandWithSession(t);
  rc = await connect(t, brand.cookie, { provider: 'revenuecat', signing_secret: SECRET });
});
afterAll(async () => destroyTestService(t));

let seq = 0;
/** A RevenueCat webhook body as RevenueCat documents it. */
function rcEvent(event: Record<string, unknown>) {
  seq++;
  return JSON.stringify({
    api_version: '1.0',
    event: {
      id: `9f1c2d3e-0000-4000-8000-${String(seq).padStart(12, '0')}`,
      type: 'INITIAL_PURCHASE',
      app_id: 'app7f3a',
      app_user_id: '$RCAnonymousID:4b1e0c',
      store: 'APP_STORE',
      environment: 'PRODUCTION',
      period_type: 'NORMAL',
      transaction_id: `20000008712${String(seq).padStart(5, '0')}`,
      original_transaction_id: `20000008712${String(seq).padStart(5, '0')}`,
      purchased_at_ms: 1767225600000,
      event_timestamp_ms: 1767225603000,
      currency: 'EUR',
      price: 10.84,
      price_in_purchased_currency: 9.99,
      subscriber_attributes: { svc_install_id: { value: INSTALL_ID, updated_at_ms: 1767225000000 } },
      ...event,
    },
  });
}
const send = (body: string, auth: string | null = SECRET) => deliver(t, rc.webhook_url, body, auth === null ? {} : { authorization: auth });

describe('RevenueCat authentication', () => {
  it('refuses a missing or wrong Authorization value with 401 and marks the connection error', async () => {
    expect(await send(rcEvent({ type: 'TEST' }), null)).toEqual({ status: 401, body: { error: 'authorization_missing' } });
    expect(await send(rcEvent({ type: 'TEST' }), 'wrong')).toEqual({ status: 401, body: { error: 'authorization_mismatch' } });
    const c = await connectionOf(t, brand.cookie, rc.id);
    expect(c).toMatchObject({ status: 'error', last_error: 'authorization_mismatch', last_event_at: null });
    expect(JSON.stringify(c)).not.toContain(SECRET);
  });

  it('accepts the value as sent or as Bearer; a verified TEST event is ignored and connects', async () => {
    expect(await send(rcEvent({ type: 'TEST' }), SECRET)).toEqual({ status: 200, body: { ok: true, recorded: 0, ignored: 1 } });
    expect(await send(rcEvent({ type: 'TEST' }), `Bearer ${SECRET}`)).toMatchObject({ status: 200 });
    const c = await connectionOf(t, brand.cookie, rc.id);
    expect(c).toMatchObject({ status: 'connected', last_error: null });
    expect(c.last_event_at).not.toBeNull();
  });

  it('answers 422 for an unparseable body and marks the connection error', async () => {
    expect(await send('{"api_version": "1.0", "event": ')).toEqual({ status: 422, body: { error: 'unparseable_payload' } });
    expect(await send('{"api_version":"1.0"}')).toMatchObject({ status: 422 });
    expect(await connectionOf(t, brand.cookie, rc.id)).toMatchObject({ status: 'error', last_error: 'unparseable_payload' });
  });

  it('reads the raw body whatever its content type', async () => {
    for (const contentType of ['text/plain', 'application/octet-stream', 'application/json; charset=utf-8']) {
      const res = await deliver(t, rc.webhook_url, rcEvent({ type: 'TEST' }), { authorization: SECRET, 'content-type': contentType });
      expect(res.status, contentType).toBe(200);
    }
    const bare = await t.request({ method: 'POST', url: new URL(rc.webhook_url).pathname, headers: { authorization: SECRET }, payload: rcEvent({ type: 'TEST' }) });
    expect(bare.statusCode).toBe(200);
    const empty = await t.request({ method: 'POST', url: new URL(rc.webhook_url).pathname, headers: { authorization: SECRET } });
    expect(empty.statusCode).toBe(422);
  });

  it('with no secret stored the URL token alone authenticates', async () => {
    const other = await brandWithSession(t, 'NoSecret');
    const open = await connect(t, other.cookie, { provider: 'revenuecat' });
    expect((await deliver(t, open.webhook_url, rcEvent({ type: 'TEST' }))).status).toBe(200);
    // The probe: 99,999,999,999,999 USD on the URL token alone is beyond the bound; nothing recorded.
    const huge = rcEvent({ transaction_id: '2000000899999999', currency: 'USD', price: 99_999_999_999_999, price_in_purchased_currency: 99_999_999_999_999 });
    expect(await deliver(t, open.webhook_url, huge)).toEqual({ status: 422, body: { error: 'unrecordable_values' } });
    expect(await connectionOf(t, other.cookie, open.id)).toMatchObject({ status: 'error', last_error: 'unrecordable_values' });
    const refund = rcEvent({ type: 'CANCELLATION', cancel_reason: 'CUSTOMER_SUPPORT', currency: 'USD', price: -1_000_000_000.5, price_in_purchased_currency: -1_000_000_000.5 });
    expect((await deliver(t, open.webhook_url, refund)).status).toBe(422);
    // A transaction id that makes a key over 128 characters is refused, never cut.
    const long = rcEvent({ transaction_id: '2'.repeat(130), currency: 'USD', price: 5, price_in_purchased_currency: 5 });
    expect(await deliver(t, open.webhook_url, long)).toEqual({ status: 422, body: { error: 'unrecordable_values' } });
    expect(await ledgerRows(t, other.brandId)).toEqual([]);
  });
});

describe('RevenueCat mapping', () => {
  it('INITIAL_PURCHASE → purchase in the purchased currency, apple: key, install ID as external user', async () => {
    const body = rcEvent({ transaction_id: '2000000871234567', environment: 'SANDBOX' });
    expect(await send(body)).toEqual({ status: 200, body: { ok: true, recorded: 1, ignored: 0 } });
    const row = await ledgerRow(t, brand.brandId, 'purchase', 'apple:2000000871234567');
    expect(row).toMatchObject({ amount: '9.9900', currency: 'EUR', source: 'revenuecat', sandbox: true, external_user_id: INSTALL_ID });
    expect(row.occurred_at.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    // Redelivery: the same payload again is a duplicate.
    expect(await send(body)).toEqual({ status: 200, body: { ok: true, recorded: 0, ignored: 1 } });
    expect((await ledgerRows(t, brand.brandId)).filter((r) => r.transaction_id === 'apple:2000000871234567')).toHaveLength(1);
  });

  it('an unsupported currency falls back to the USD price; Play Store gets the google: prefix', async () => {
    await send(rcEvent({ transaction_id: 'GPA.3372-1111', store: 'PLAY_STORE', currency: 'JPY', price: 6.5, price_in_purchased_currency: 980 }));
    expect(await ledgerRow(t, brand.brandId, 'purchase', 'google:GPA.3372-1111')).toMatchObject({ amount: '6.5000', currency: 'USD' });
  });

  it('trial → trial at 0; NON_RENEWING_PURCHASE → purchase; RENEWAL → renewal; trial conversion → purchase', async () => {
    await send(rcEvent({ transaction_id: 'T-1', period_type: 'TRIAL', price: 0, price_in_purchased_currency: 0 }));
    await send(rcEvent({ type: 'NON_RENEWING_PURCHASE', transaction_id: 'NR-1' }));
    await send(rcEvent({ type: 'RENEWAL', transaction_id: 'R-1', original_transaction_id: 'T-0' }));
    await send(rcEvent({ type: 'RENEWAL', transaction_id: 'C-1', original_transaction_id: 'T-1', is_trial_conversion: true }));
    expect(await ledgerRow(t, brand.brandId, 'trial', 'apple:T-1')).toMatchObject({ amount: '0.0000' });
    await ledgerRow(t, brand.brandId, 'purchase', 'apple:NR-1');
    await ledgerRow(t, brand.brandId, 'renewal', 'apple:R-1');
    await ledgerRow(t, brand.brandId, 'purchase', 'apple:C-1');
  });

  it('CANCELLATION with CUSTOMER_SUPPORT → negative refund at the event time; other cancellations are ignored', async () => {
    const refund = rcEvent({
      type: 'CANCELLATION',
      cancel_reason: 'CUSTOMER_SUPPORT',
      transaction_id: 'NR-1',
      price: -10.84,
      price_in_purchased_currency: -9.99,
      event_timestamp_ms: 1767312000000,
    });
    expect((await send(refund)).body).toMatchObject({ recorded: 1 });
    const row = await ledgerRow(t, brand.brandId, 'refund', 'apple:NR-1');
    expect(row).toMatchObject({ amount: '-9.9900', currency: 'EUR' });
    expect(row.occurred_at.toISOString()).toBe('2026-01-02T00:00:00.000Z');
    for (const type of ['CANCELLATION', 'UNCANCELLATION', 'EXPIRATION', 'BILLING_ISSUE', 'PRODUCT_CHANGE', 'TRANSFER', 'SUBSCRIBER_ALIAS', 'TEMPORARY_ENTITLEMENT_GRANT', 'REFUND_REVERSED']) {
      expect((await send(rcEvent({ type, cancel_reason: 'UNSUBSCRIBE' }))).body, type).toEqual({ ok: true, recorded: 0, ignored: 1 });
    }
  });

  it('with settings.app_id, events of other apps are ignored', async () => {
    const other = await brandWithSession(t, 'OneApp');
    const c = await connect(t, other.cookie, { provider: 'revenuecat', settings: { app_id: 'app_main' } });
    expect((await deliver(t, c.webhook_url, rcEvent({ app_id: 'app_other' }))).body).toMatchObject({ recorded: 0, ignored: 1 });
    expect((await deliver(t, c.webhook_url, rcEvent({ app_id: 'app_main' }))).body).toMatchObject({ recorded: 1 });
  });

  it('reads the install ID from the attribute named in settings', async () => {
    const other = await brandWithSession(t, 'CustomAttr');
    const c = await connect(t, other.cookie, { provider: 'revenuecat', settings: { install_id_attribute: 'installId' } });
    await deliver(t, c.webhook_url, rcEvent({ transaction_id: 'ATTR-1', subscriber_attributes: { installId: { value: 'ABC-1' } } }));
    await deliver(t, c.webhook_url, rcEvent({ transaction_id: 'ATTR-2', app_user_id: 'user-42', subscriber_attributes: {} }));
    expect(await ledgerRow(t, other.brandId, 'purchase', 'apple:ATTR-1')).toMatchObject({ external_user_id: 'ABC-1' });
    expect(await ledgerRow(t, other.brandId, 'purchase', 'apple:ATTR-2')).toMatchObject({ external_user_id: 'user-42' });
  });
});

describe('RevenueCat attribution', () => {
  it('a purchase inherits the recorded install\'s attribution through svc_install_id (any case)', async () => {
    const creator = await createCreator(t, { name: 'Maya Lopez', first_name: 'Maya' });
    await createCode(t, { brand_id: brand.brandId, creator_id: creator.id, label: 'MAYA10' });
    const installId = 'a1b2c3d4-0000-4000-8000-00000000c0de';
    const install = await t.request({
      method: 'POST',
      url: '/api/public/attribution/installs',
      payload: { pixel_key: brand.pixelKey, install_id: installId.toUpperCase(), platform: 'ios', code: 'maya10' },
    });
    expect(install.statusCode, install.body).toBe(201);
    await send(rcEvent({ transaction_id: 'INH-1', subscriber_attributes: { svc_install_id: { value: installId.toUpperCase() } } }));
    const row = await ledgerRow(t, brand.brandId, 'purchase', 'apple:INH-1');
    expect(row).toMatchObject({ resolution_method: 'code', code_label: 'MAYA10', creator_id: creator.id });
  });

  it('a creator code in svc_code credits the code; its refund copies the purchase\'s attribution', async () => {
    await send(rcEvent({ type: 'NON_RENEWING_PURCHASE', transaction_id: 'CODE-1', subscriber_attributes: { svc_code: { value: 'maya10' } } }));
    expect(await ledgerRow(t, brand.brandId, 'purchase', 'apple:CODE-1')).toMatchObject({ resolution_method: 'code', code_label: 'MAYA10' });
    await send(rcEvent({ type: 'CANCELLATION', cancel_reason: 'CUSTOMER_SUPPORT', transaction_id: 'CODE-1', subscriber_attributes: {} }));
    expect(await ledgerRow(t, brand.brandId, 'refund', 'apple:CODE-1')).toMatchObject({ resolution_method: 'code', code_label: 'MAYA10' });
  });

  it('sandbox rows reach ClickHouse marked sandbox', async () => {
    await t.settle();
    const rows = await t.services.warehouse.rows<{ transaction_id: string; sandbox: number }>(
      'SELECT transaction_id, sandbox FROM ledger WHERE brand_id = {brand:String} AND transaction_id = {tx:String}',
      { brand: brand.brandId, tx: 'apple:2000000871234567' },
    );
    expect(rows.map((r) => Number(r.sandbox))).toEqual([1]);
  });
});
