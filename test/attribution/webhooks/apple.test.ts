import { createHash, X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPLE_ROOT_CA_G3, APPLE_ROOT_CA_G3_SHA256 } from '../../../src/attribution/webhooks/apple-root';
import { loadConfig } from '../../../src/config';
import { createCode } from '../../helpers/attribution-fixtures';
import { createCreator } from '../../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { brandWithSession, type Connection, connect, connectionOf, deliver, ledgerRow, ledgerRows, makeAppleCa } from './helpers';

type Sign = (payload: unknown, header?: Record<string, unknown>) => string;

let t: TestService;
let brand: Awaited<ReturnType<typeof brandWithSession>>;
let apple: Connection;
let signJws: Sign;
let signWithoutLeafOid: Sign;
let signWithForeignRoot: Sign;
const BUNDLE = 'com.brand.app';

beforeAll(async () => {
  const ca = await makeAppleCa();
  signJws = await ca.chain();
  signWithoutLeafOid = await ca.chain({ leafOid: false });
  signWithForeignRoot = await (await makeAppleCa()).chain();
  t = await startTestService({ workers: false, env: { TEST_APPLE_ROOT_CA: ca.rootDer } });
  brand = await brandWithSession(t);
  apple = await connect(t, brand.cookie, { provider: 'apple', settings: { bundle_id: BUNDLE } });
});
afterAll(async () => destroyTestService(t));

let seq = 0;
/** A transaction as Apple signs it (JWSTransactionDecodedPayload). */
const transaction = (fields: Record<string, unknown> = {}) => {
  seq++;
  return {
    transactionId: `20000008712${String(seq).padStart(5, '0')}`,
    originalTransactionId: `20000008712${String(seq).padStart(5, '0')}`,
    bundleId: BUNDLE,
    productId: 'pro.monthly',
    purchaseDate: 1767225600000,
    price: 49990,
    currency: 'USD',
    transactionReason: 'PURCHASE',
    type: 'Auto-Renewable Subscription',
    inAppOwnershipType: 'PURCHASED',
    environment: 'Sandbox',
    signedDate: Date.now(),
    ...fields,
  };
};
/** The body App Store Server Notifications V2 posts: {"signedPayload": JWS}, with a nested signed transaction. */
function notification(
  type: string,
  subtype: string | undefined,
  tx: Record<string, unknown> | null,
  data: Record<string, unknown> = {},
  sign: Sign = signJws,
) {
  const environment = (tx?.environment as string | undefined) ?? 'Sandbox';
  const payload = {
    notificationType: type,
    ...(subtype ? { subtype } : {}),
    notificationUUID: crypto.randomUUID(),
    version: '2.0',
    signedDate: Date.now(),
    data: {
      environment,
      bundleId: BUNDLE,
      appAppleId: 6470000000,
      ...(tx ? { signedTransactionInfo: sign(tx) } : {}),
      ...data,
    },
  };
  return JSON.stringify({ signedPayload: sign(payload) });
}
const send = (body: string, url = apple.webhook_url) => deliver(t, url, body);

describe('Apple root pin', () => {
  it('embeds Apple Root CA - G3 with the SHA-256 fingerprint Apple publishes', () => {
    expect(APPLE_ROOT_CA_G3_SHA256).toBe('63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79');
    const sha256 = createHash('sha256').update(APPLE_ROOT_CA_G3).digest('hex').toUpperCase().match(/../g)!.join(':');
    expect(sha256).toBe(APPLE_ROOT_CA_G3_SHA256);
    const cert = new X509Certificate(APPLE_ROOT_CA_G3);
    expect(cert.subject).toContain('CN=Apple Root CA - G3');
    expect(cert.validTo).toContain('2039');
  });

  it('is replaced only by test configuration', () => {
    const env = { SECRET_KEY: 'x'.repeat(32), ADMIN_JWT_SECRET: 'y'.repeat(32), TEST_APPLE_ROOT_CA: 'AAAA' };
    expect(() => loadConfig({ ...env, NODE_ENV: 'production' })).toThrow(/TEST_APPLE_ROOT_CA is honoured only when NODE_ENV=test/);
    expect(() => loadConfig({ ...env, NODE_ENV: 'development' })).toThrow(/NODE_ENV=test/);
    expect(loadConfig({ ...env, NODE_ENV: 'test' }).testAppleRootCa).toEqual(Buffer.from('AAAA', 'base64'));
  });
});

describe('Apple verification', () => {
  it('verifies a TEST notification, ignores it and connects', async () => {
    const test = notification('TEST', undefined, null);
    expect(await send(test)).toEqual({ status: 200, body: { ok: true, recorded: 0, ignored: 1 } });
    expect(await connectionOf(t, brand.cookie, apple.id)).toMatchObject({ status: 'connected', last_error: null });
  });

  it('refuses another bundle with 401 bundle_id_mismatch and marks the connection error', async () => {
    const body = notification('SUBSCRIBED', 'INITIAL_BUY', transaction(), { bundleId: 'com.other.app' });
    expect(await send(body)).toEqual({ status: 401, body: { error: 'bundle_id_mismatch' } });
    expect(await connectionOf(t, brand.cookie, apple.id)).toMatchObject({ status: 'error', last_error: 'bundle_id_mismatch' });
    // The nested transaction must name the bundle too.
    const nested = notification('SUBSCRIBED', 'INITIAL_BUY', transaction({ bundleId: 'com.other.app' }));
    expect((await send(nested)).body).toEqual({ error: 'bundle_id_mismatch' });
  });

  it('refuses a tampered payload, a chain to another root, and a leaf without Apple\'s marker OID', async () => {
    const body = JSON.parse(notification('SUBSCRIBED', 'INITIAL_BUY', transaction()));
    const [h, p, s] = body.signedPayload.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), notificationType: 'REFUND' })).toString('base64url');
    expect(await send(JSON.stringify({ signedPayload: `${h}.${forged}.${s}` }))).toEqual({ status: 401, body: { error: 'signature_mismatch' } });
    expect((await send(notification('TEST', undefined, null, {}, signWithForeignRoot))).body).toEqual({ error: 'certificate_chain_invalid' });
    expect((await send(notification('TEST', undefined, null, {}, signWithoutLeafOid))).body).toEqual({ error: 'signature_mismatch' });
    expect((await send(JSON.stringify({ signedPayload: signJws({ notificationType: 'TEST', data: { bundleId: BUNDLE, environment: 'Sandbox' } }, { alg: 'none' }) }))).status).toBe(401);
    expect((await send(JSON.stringify({ signedPayload: 'not.a.jws' }))).status).toBe(401);
    // The nested signed transaction is verified the same way.
    const payload = { notificationType: 'SUBSCRIBED', subtype: 'INITIAL_BUY', signedDate: Date.now(), data: { environment: 'Sandbox', bundleId: BUNDLE, signedTransactionInfo: signWithForeignRoot(transaction()) } };
    expect((await send(JSON.stringify({ signedPayload: signJws(payload) }))).body).toEqual({ error: 'certificate_chain_invalid' });
  });

  it('refuses the unsigned Xcode and LocalTesting environments', async () => {
    const xcode = notification('SUBSCRIBED', 'INITIAL_BUY', transaction({ environment: 'Xcode' }));
    expect(await send(xcode)).toEqual({ status: 401, body: { error: 'environment_invalid' } });
  });

  it('answers 422 when the body is not {"signedPayload": "..."}', async () => {
    expect(await send('signedPayload=abc')).toEqual({ status: 422, body: { error: 'unparseable_payload' } });
    expect((await send('{}')).status).toBe(422);
    expect(await connectionOf(t, brand.cookie, apple.id)).toMatchObject({ status: 'error', last_error: 'unparseable_payload' });
  });
});

describe('Apple mapping', () => {
  it('SUBSCRIBED INITIAL_BUY → sandbox purchase in major units; redelivery is a duplicate', async () => {
    const tx = transaction({ appAccountToken: '3F2B9C1E-6A7D-4E21-9B55-0C7D8E9FA012' });
    const body = notification('SUBSCRIBED', 'INITIAL_BUY', tx);
    expect(await send(body)).toEqual({ status: 200, body: { ok: true, recorded: 1, ignored: 0 } });
    expect(await send(body)).toEqual({ status: 200, body: { ok: true, recorded: 0, ignored: 1 } });
    const row = await ledgerRow(t, brand.brandId, 'purchase', `apple:${tx.transactionId}`);
    expect(row).toMatchObject({
      amount: '49.9900',
      currency: 'USD',
      source: 'apple',
      sandbox: true,
      external_user_id: '3f2b9c1e-6a7d-4e21-9b55-0c7d8e9fa012',
    });
    expect(row.occurred_at.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    // OFFER_REDEEMED for the same purchase collapses onto the same key.
    expect((await send(notification('OFFER_REDEEMED', 'INITIAL_BUY', tx))).body).toEqual({ ok: true, recorded: 0, ignored: 1 });
  });

  it('accepts appAccountToken only when it is a well-formed UUID', async () => {
    const tx = transaction({ appAccountToken: 'user-42' });
    await send(notification('SUBSCRIBED', 'RESUBSCRIBE', tx));
    expect(await ledgerRow(t, brand.brandId, 'purchase', `apple:${tx.transactionId}`)).toMatchObject({ external_user_id: null });
  });

  it('free trial → trial; the first DID_RENEW → purchase, later ones → renewal', async () => {
    const trial = transaction({ offerType: 1, offerDiscountType: 'FREE_TRIAL', price: 0 });
    await send(notification('SUBSCRIBED', 'INITIAL_BUY', trial));
    expect(await ledgerRow(t, brand.brandId, 'trial', `apple:${trial.transactionId}`)).toMatchObject({ amount: '0.0000' });
    const first = transaction({ originalTransactionId: trial.transactionId, transactionReason: 'RENEWAL', purchaseDate: 1767830400000 });
    const firstBody = notification('DID_RENEW', undefined, first);
    expect((await send(firstBody)).body).toMatchObject({ recorded: 1 });
    expect(await ledgerRow(t, brand.brandId, 'purchase', `apple:${first.transactionId}`)).toMatchObject({ amount: '49.9900' });
    expect((await send(firstBody)).body).toEqual({ ok: true, recorded: 0, ignored: 1 }); // redelivered: still the purchase
    const second = transaction({ originalTransactionId: trial.transactionId, transactionReason: 'RENEWAL', currency: 'EUR', price: 44990 });
    await send(notification('DID_RENEW', 'BILLING_RECOVERY', second));
    expect(await ledgerRow(t, brand.brandId, 'renewal', `apple:${second.transactionId}`)).toMatchObject({ amount: '44.9900', currency: 'EUR' });
    // Without a trial, DID_RENEW is a renewal.
    const plain = transaction({ originalTransactionId: '1999' });
    await send(notification('DID_RENEW', undefined, plain));
    await ledgerRow(t, brand.brandId, 'renewal', `apple:${plain.transactionId}`);
    // A trial posted with the public pixel key is no provider's word: the renewal stays a renewal.
    const claimed = await t.request({
      method: 'POST',
      url: '/api/public/attribution/events',
      payload: { pixel_key: brand.pixelKey, event_type: 'trial', transaction_id: 'apple:2998' },
    });
    expect(claimed.statusCode, claimed.body).toBe(200);
    const afterPublicTrial = transaction({ originalTransactionId: '2998' });
    await send(notification('DID_RENEW', undefined, afterPublicTrial));
    await ledgerRow(t, brand.brandId, 'renewal', `apple:${afterPublicTrial.transactionId}`);
  });

  it('ONE_TIME_CHARGE → purchase; unsupported currencies keep the number labelled USD', async () => {
    const tx = transaction({ type: 'Consumable', price: 1200000, currency: 'JPY' });
    await send(notification('ONE_TIME_CHARGE', undefined, tx));
    expect(await ledgerRow(t, brand.brandId, 'purchase', `apple:${tx.transactionId}`)).toMatchObject({ amount: '1200.0000', currency: 'USD' });
  });

  it('ignores family-shared transactions, family revocations and non-money notifications', async () => {
    const before = (await ledgerRows(t, brand.brandId)).length;
    const shared = transaction({ inAppOwnershipType: 'FAMILY_SHARED' });
    expect((await send(notification('SUBSCRIBED', 'INITIAL_BUY', shared))).body).toEqual({ ok: true, recorded: 0, ignored: 1 });
    const revoke = transaction({ revocationType: 'FAMILY_REVOKE', revocationDate: Date.now() });
    expect((await send(notification('REFUND', undefined, revoke))).body).toMatchObject({ ignored: 1 });
    for (const [type, subtype] of [
      ['DID_CHANGE_RENEWAL_STATUS', 'AUTO_RENEW_DISABLED'],
      ['DID_CHANGE_RENEWAL_PREF', 'UPGRADE'],
      ['DID_FAIL_TO_RENEW', 'GRACE_PERIOD'],
      ['EXPIRED', 'VOLUNTARY'],
      ['REFUND_DECLINED', undefined],
      ['REFUND_REVERSED', undefined],
      ['CONSUMPTION_REQUEST', undefined],
      ['RENEWAL_EXTENDED', undefined],
      ['REVOKE', undefined],
      ['SUBSCRIBED', 'UPGRADE'],
    ] as const) {
      expect((await send(notification(type, subtype, transaction()))).body, type).toEqual({ ok: true, recorded: 0, ignored: 1 });
    }
    expect((await ledgerRows(t, brand.brandId)).length).toBe(before);
  });

  it('production notifications are live rows; the App Apple ID is checked when set', async () => {
    const other = await brandWithSession(t, 'ProdApp');
    const c = await connect(t, other.cookie, { provider: 'apple', settings: { bundle_id: BUNDLE, app_apple_id: 6470000000 } });
    const tx = transaction({ environment: 'Production' });
    expect((await send(notification('SUBSCRIBED', 'INITIAL_BUY', tx), c.webhook_url)).body).toMatchObject({ recorded: 1 });
    expect(await ledgerRow(t, other.brandId, 'purchase', `apple:${tx.transactionId}`)).toMatchObject({ sandbox: false });
    const wrongApp = notification('SUBSCRIBED', 'INITIAL_BUY', transaction({ environment: 'Production' }), { appAppleId: 1 });
    expect((await send(wrongApp, c.webhook_url)).status).toBe(401);
  });

  it('a connection limited to production verifies and ignores sandbox notifications', async () => {
    const other = await brandWithSession(t, 'ProdOnly');
    const c = await connect(t, other.cookie, { provider: 'apple', settings: { bundle_id: BUNDLE, environment: 'production' } });
    expect((await send(notification('SUBSCRIBED', 'INITIAL_BUY', transaction()), c.webhook_url)).body).toEqual({ ok: true, recorded: 0, ignored: 1 });
  });
});

describe('Apple attribution', () => {
  let creatorId: string;

  it('a purchase inherits the install recorded under appAccountToken; a partial refund copies it', async () => {
    creatorId = (await createCreator(t, { name: 'Maya Lopez', first_name: 'Maya' })).id;
    await createCode(t, { brand_id: brand.brandId, creator_id: creatorId, label: 'MAYA10' });
    const installId = 'C0FFEE00-1111-4222-8333-444455556666'; // Swift's UUID().uuidString is upper case
    const install = await t.request({
      method: 'POST',
      url: '/api/public/attribution/installs',
      payload: { pixel_key: brand.pixelKey, install_id: installId, platform: 'ios', code: 'MAYA10' },
    });
    expect(install.statusCode, install.body).toBe(201);

    const tx = transaction({ appAccountToken: installId.toLowerCase(), price: 99990, currency: 'GBP' });
    await send(notification('SUBSCRIBED', 'INITIAL_BUY', tx));
    expect(await ledgerRow(t, brand.brandId, 'purchase', `apple:${tx.transactionId}`)).toMatchObject({
      resolution_method: 'code',
      code_label: 'MAYA10',
      creator_id: creatorId,
    });

    const refund = { ...tx, revocationDate: 1767571200000, revocationReason: 1, revocationType: 'REFUND_PRORATED', revocationPercentage: 50000 };
    expect((await send(notification('REFUND', undefined, refund))).body).toMatchObject({ recorded: 1 });
    const row = await ledgerRow(t, brand.brandId, 'refund', `apple:${tx.transactionId}`);
    expect(row).toMatchObject({ amount: '-49.9950', currency: 'GBP', code_label: 'MAYA10', creator_id: creatorId });
    expect(row.occurred_at.toISOString()).toBe('2026-01-05T00:00:00.000Z');
  });

  it('one App Store purchase reported by apple and revenuecat is one ledger row', async () => {
    const rc = await connect(t, brand.cookie, { provider: 'revenuecat' });
    const tx = transaction();
    expect((await send(notification('SUBSCRIBED', 'INITIAL_BUY', tx))).body).toMatchObject({ recorded: 1 });
    const rcBody = JSON.stringify({
      api_version: '1.0',
      event: {
        id: crypto.randomUUID(),
        type: 'INITIAL_PURCHASE',
        app_user_id: 'user-1',
        store: 'APP_STORE',
        environment: 'SANDBOX',
        period_type: 'NORMAL',
        transaction_id: tx.transactionId,
        original_transaction_id: tx.transactionId,
        purchased_at_ms: tx.purchaseDate,
        event_timestamp_ms: tx.purchaseDate + 3000,
        currency: 'USD',
        price: 49.99,
        price_in_purchased_currency: 49.99,
      },
    });
    expect((await deliver(t, rc.webhook_url, rcBody)).body).toEqual({ ok: true, recorded: 0, ignored: 1 });
    const rows = (await ledgerRows(t, brand.brandId)).filter((r) => r.transaction_id === `apple:${tx.transactionId}`);
    expect(rows).toHaveLength(1);
  });
});
