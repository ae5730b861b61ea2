import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { brandWithSession, type Connection, connect, connectionOf, deliver, ledgerRow } from './helpers';

let t: TestService;
let brand: Awaited<ReturnType<typeof brandWithSession>>;
let adapty: Connection;
const PROD = 'adapty-prod-value';
const SANDBOX = 'adapty-sandbox-value';

beforeAll(async () => {
  t = await startTestService({ workers: false });
  brand = await brandWithSession(t);
  adapty = await connect(t, brand.cookie, {
    provider: 'adapty',
    signing_secret: PROD,
    settings: { sandbox_secret: SANDBOX, event_name_map: { my_purchase: 'subscription_started' } },
  });
});
afterAll(async () => destroyTestService(t));

let seq = 0;
/** An Adapty webhook body as Adapty documents it. */
function adaptyEvent(eventType: string, properties: Record<string, unknown> = {}, top: Record<string, unknown> = {}) {
  seq++;
  return JSON.stringify({
    profile_id: '7c0e2a44-1b3f-4d8e-9a61-2f5d7c9e0b13',
    customer_user_id: null,
    event_type: eventType,
    event_datetime: '2026-01-01T10:15:00.000000+0000',
    event_api_version: 1,
    event_properties: {
      store: 'app_store',
      environment: 'Production',
      transaction_id: `ad-${seq}`,
      original_transaction_id: `ad-${seq}`,
      currency: 'GBP',
      price_local: 8.99,
      price_usd: 11.37,
      profile_event_id: `d1e2f3a4-5b6c-4d7e-8f90-${String(seq).padStart(12, '0')}`,
      ...properties,
    },
    user_attributes: { svc_install_id: '3F2B9C1E-6A7D-4E21-9B55-0C7D8E9FA012', svc_cid: 'svc_notaminted' },
    ...top,
  });
}
const send = (body: string, auth: string | null = PROD) => deliver(t, adapty.webhook_url, body, auth === null ? {} : { authorization: auth });

describe('Adapty', () => {
  it('answers the {} verification request 200 with nothing recorded or ignored, and connects', async () => {
    expect(await send('{}')).toEqual({ status: 200, body: { ok: true, recorded: 0, ignored: 0 } });
    expect(await connectionOf(t, brand.cookie, adapty.id)).toMatchObject({ status: 'connected' });
  });

  it('accepts the production or the sandbox Authorization value exactly as typed', async () => {
    expect((await send(adaptyEvent('access_level_updated'), SANDBOX)).status).toBe(200);
    expect((await send(adaptyEvent('access_level_updated'), `Bearer ${PROD}`)).body).toEqual({ error: 'authorization_mismatch' });
    expect((await send('{}', null)).status).toBe(401);
    expect(await connectionOf(t, brand.cookie, adapty.id)).toMatchObject({ status: 'error', last_error: 'authorization_missing' });
  });

  it('records what arrives with the sandbox Authorization value as sandbox, whatever the event says', async () => {
    const claimedLive = adaptyEvent('non_subscription_purchase', { transaction_id: 'SBX-LIVE', environment: 'Production' });
    expect((await send(claimedLive, SANDBOX)).body).toEqual({ ok: true, recorded: 1, ignored: 0 });
    expect(await ledgerRow(t, brand.brandId, 'purchase', 'apple:SBX-LIVE')).toMatchObject({ sandbox: true });
    const live = adaptyEvent('non_subscription_purchase', { transaction_id: 'PROD-LIVE', environment: 'Production' });
    expect((await send(live, PROD)).body).toEqual({ ok: true, recorded: 1, ignored: 0 });
    expect(await ledgerRow(t, brand.brandId, 'purchase', 'apple:PROD-LIVE')).toMatchObject({ sandbox: false });
  });

  it('answers 422 for a body that is not an Adapty event', async () => {
    expect(await send('not json')).toEqual({ status: 422, body: { error: 'unparseable_payload' } });
    expect((await send('{"profile_id":"x"}')).status).toBe(422);
    expect((await send('[]')).status).toBe(422);
  });

  it('maps purchases, renewals, trials and refunds (docs/webhooks.md#what-each-provider-records)', async () => {
    const started = adaptyEvent('subscription_started', { transaction_id: '2000000871234570', environment: 'Sandbox' });
    expect(await send(started)).toEqual({ status: 200, body: { ok: true, recorded: 1, ignored: 0 } });
    expect(await send(started)).toEqual({ status: 200, body: { ok: true, recorded: 0, ignored: 1 } });
    expect(await ledgerRow(t, brand.brandId, 'purchase', 'apple:2000000871234570')).toMatchObject({
      amount: '8.9900',
      currency: 'GBP',
      source: 'adapty',
      sandbox: true,
      external_user_id: '3f2b9c1e-6a7d-4e21-9b55-0c7d8e9fa012',
      click_token: null, // not minted by this service: credits nothing
    });

    await send(adaptyEvent('trial_converted', { transaction_id: 'TC-1' }));
    await send(adaptyEvent('non_subscription_purchase', { transaction_id: 'GPA.1', store: 'play_store', currency: 'BRL', price_local: 49.9, price_usd: 9.1 }));
    await send(adaptyEvent('subscription_renewed', { transaction_id: 'RN-1' }));
    await send(adaptyEvent('trial_started', { transaction_id: 'TR-1', price_local: 8.99 }));
    await send(adaptyEvent('subscription_refunded', { transaction_id: 'TC-1', price_local: 8.99 }));
    await send(adaptyEvent('non_subscription_purchase_refunded', { transaction_id: 'GPA.1', store: 'play_store', currency: 'BRL', price_local: -49.9, price_usd: -9.1 }));
    await ledgerRow(t, brand.brandId, 'purchase', 'apple:TC-1');
    expect(await ledgerRow(t, brand.brandId, 'purchase', 'google:GPA.1')).toMatchObject({ amount: '9.1000', currency: 'USD' });
    await ledgerRow(t, brand.brandId, 'renewal', 'apple:RN-1');
    expect(await ledgerRow(t, brand.brandId, 'trial', 'apple:TR-1')).toMatchObject({ amount: '0.0000' });
    expect(await ledgerRow(t, brand.brandId, 'refund', 'apple:TC-1')).toMatchObject({ amount: '-8.9900', currency: 'GBP' });
    expect(await ledgerRow(t, brand.brandId, 'refund', 'google:GPA.1')).toMatchObject({ amount: '-9.1000', currency: 'USD' });
  });

  it('ignores a no-charge subscription start and every other event type', async () => {
    const zero = adaptyEvent('subscription_started', { store: 'play_store', price_local: 0, price_usd: 0 });
    expect((await send(zero)).body).toEqual({ ok: true, recorded: 0, ignored: 1 });
    for (const type of ['subscription_renewal_cancelled', 'subscription_expired', 'subscription_paused', 'billing_issue_detected', 'entered_grace_period', 'access_level_updated']) {
      expect((await send(adaptyEvent(type))).body, type).toEqual({ ok: true, recorded: 0, ignored: 1 });
    }
  });

  it('translates renamed events through settings.event_name_map', async () => {
    expect((await send(adaptyEvent('my_purchase', { transaction_id: 'REN-1' }))).body).toMatchObject({ recorded: 1 });
    await ledgerRow(t, brand.brandId, 'purchase', 'apple:REN-1');
  });

  it('uses customer_user_id, then profile_id, without an install-ID attribute', async () => {
    await send(adaptyEvent('subscription_started', { transaction_id: 'U-1' }, { customer_user_id: 'user-7', user_attributes: null }));
    await send(adaptyEvent('subscription_started', { transaction_id: 'U-2' }, { user_attributes: {} }));
    expect(await ledgerRow(t, brand.brandId, 'purchase', 'apple:U-1')).toMatchObject({ external_user_id: 'user-7' });
    expect(await ledgerRow(t, brand.brandId, 'purchase', 'apple:U-2')).toMatchObject({ external_user_id: '7c0e2a44-1b3f-4d8e-9a61-2f5d7c9e0b13' });
  });
});
