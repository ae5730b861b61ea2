import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../../src/attribution/ledger/types';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { type AttributionBrand, attributionBrand, click, IPHONE, postPublic, uniqueId, warehouseRows } from './setup';

let t: TestService;
let acme: AttributionBrand;
let globex: AttributionBrand;
beforeAll(async () => {
  t = await startTestService();
  acme = await attributionBrand(t, 'Acme');
  globex = await attributionBrand(t, 'Globex');
});
afterAll(async () => destroyTestService(t));

const event = (body: Record<string, unknown>) => postPublic(t, 'events', { pixel_key: acme.brand.pixel_key, ...body });

/** Posts an event that must be accepted as new. */
async function recordEvent(body: Record<string, unknown>) {
  const res = await event(body);
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toEqual({ ok: true, duplicate: false });
}

type LedgerFact = Record<string, unknown> & { amount: number | string };
/** The ClickHouse ledger rows of a transaction, after the queues settled. */
async function ledgerRows(transactionId: string, brandId = acme.brand.id): Promise<LedgerFact[]> {
  await t.settle();
  return warehouseRows<LedgerFact>(t, 'ledger', 'brand_id = {b:String} AND transaction_id = {tx:String} ORDER BY recorded_at', {
    b: brandId,
    tx: transactionId,
  });
}
async function ledgerRow(transactionId: string): Promise<Record<string, unknown> & { amount: number }> {
  const rows = await ledgerRows(transactionId);
  expect(rows).toHaveLength(1);
  return { ...rows[0]!, amount: Number(rows[0]!.amount) };
}

describe('POST /api/public/attribution/events: acceptance', () => {
  it('records every event type, purchase when absent or blank, and refuses others with 422 invalid_event_type', async () => {
    for (const event_type of EVENT_TYPES) {
      const tx = uniqueId(event_type);
      // A refund needs the public purchase of its transaction (docs/api.md, "Refunds").
      if (event_type === 'refund') await recordEvent({ transaction_id: tx, amount: 5 });
      await recordEvent({ event_type, transaction_id: tx, amount: 5 });
      if (event_type === 'refund') {
        expect((await ledgerRows(tx)).map((r) => r.event_type)).toEqual(['purchase', 'refund']);
        continue;
      }
      expect((await ledgerRow(tx)).event_type).toBe(event_type);
    }
    for (const absent of [{}, { event_type: null }, { event_type: ' ' }]) {
      const tx = uniqueId('default');
      await recordEvent({ ...absent, transaction_id: tx, amount: 5 });
      expect((await ledgerRow(tx)).event_type, JSON.stringify(absent)).toBe('purchase');
    }
    for (const event_type of ['order', 'PURCHASE!', 7]) {
      const res = await event({ event_type, transaction_id: uniqueId() });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual({ error: 'invalid_event_type' });
    }
  });

  it('records the source: sdk, else pixel', async () => {
    for (const [source, stored] of [
      ['sdk', 'sdk'],
      ['pixel', 'pixel'],
      ['stripe', 'pixel'],
      [undefined, 'pixel'],
    ]) {
      const tx = uniqueId('src');
      await recordEvent({ transaction_id: tx, source, amount: 1 });
      expect((await ledgerRow(tx)).source).toBe(stored);
    }
  });

  it('keeps USD, CAD, EUR, GBP and AUD, and records anything else as USD', async () => {
    for (const [currency, stored] of [
      ['USD', 'USD'],
      ['CAD', 'CAD'],
      ['EUR', 'EUR'],
      ['GBP', 'GBP'],
      ['AUD', 'AUD'],
      ['eur', 'EUR'],
      ['JPY', 'USD'],
      [undefined, 'USD'],
    ]) {
      const tx = uniqueId('cur');
      await recordEvent({ transaction_id: tx, currency, amount: 9.99 });
      expect(await ledgerRow(tx)).toMatchObject({ currency: stored, amount: 9.99 });
    }
  });

  it('takes amount in major units or amount_cents, amount first; none is 0', async () => {
    const cases: [Record<string, unknown>, number][] = [
      [{ amount: 49.99 }, 49.99],
      [{ amount: '12.50' }, 12.5],
      [{ amount_cents: 1999 }, 19.99],
      [{ amount: 3, amount_cents: 999 }, 3],
      [{}, 0],
    ];
    for (const [money, stored] of cases) {
      const tx = uniqueId('amt');
      await recordEvent({ transaction_id: tx, ...money });
      expect((await ledgerRow(tx)).amount).toBe(stored);
    }
    expect((await event({ transaction_id: uniqueId(), amount: 'lots' })).json()).toEqual({ error: 'invalid_amount' });
  });

  it('deduplicates on (brand, event_type, transaction_id)', async () => {
    const tx = uniqueId('dup');
    await recordEvent({ transaction_id: tx, amount: 10 });
    expect((await event({ transaction_id: tx, amount: 10 })).json()).toEqual({ ok: true, duplicate: true });
    // Another event type, or another brand, with the same transaction id is another event.
    await recordEvent({ event_type: 'renewal', transaction_id: tx, amount: 10 });
    const other = await postPublic(t, 'events', { pixel_key: globex.brand.pixel_key, transaction_id: tx, amount: 10 });
    expect(other.json()).toEqual({ ok: true, duplicate: false });
    expect(await ledgerRows(tx)).toHaveLength(2);
    expect(await ledgerRows(tx, globex.brand.id)).toHaveLength(1);
  });

  it('answers exactly one duplicate:false under concurrent identical requests, and writes one row', async () => {
    const tx = uniqueId('race');
    const answers = await Promise.all(Array.from({ length: 16 }, () => event({ transaction_id: tx, amount: 20 })));
    expect(answers.every((a) => a.statusCode === 200)).toBe(true);
    expect(answers.filter((a) => a.json().duplicate === false)).toHaveLength(1);
    expect(await ledgerRows(tx)).toHaveLength(1);
  });

  it('strips transaction ids and refuses those over 128 characters (never cut); numeric ids are text; no id is never deduplicated', async () => {
    const id128 = `${uniqueId('long')}${'y'.repeat(200)}`.slice(0, 128);
    await recordEvent({ transaction_id: ` ${id128} `, amount: 1 });
    expect(await ledgerRows(id128)).toHaveLength(1);
    expect((await event({ transaction_id: id128, amount: 1 })).json().duplicate).toBe(true);
    // 129 characters sharing the first 128 with the order above: refused, not merged into it.
    for (const long of [`${id128}z`, `${uniqueId('long')}${'y'.repeat(300)}`]) {
      const res = await event({ transaction_id: long, amount: 1 });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual({ error: 'invalid_transaction_id' });
    }
    expect(await ledgerRows(id128)).toHaveLength(1);

    const order = Date.now();
    await recordEvent({ transaction_id: order, amount: 1 });
    expect(await ledgerRows(String(order))).toHaveLength(1);
    // A number JSON cannot carry exactly could collide with another order's: refused, not deduplicated.
    const inexact = await t.request({
      method: 'POST',
      url: '/api/public/attribution/events',
      headers: { 'content-type': 'application/json' },
      payload: `{"pixel_key":"${acme.brand.pixel_key}","transaction_id":12345678901234567891,"amount":1}`,
    });
    expect(inexact.statusCode).toBe(422);
    expect(inexact.json()).toEqual({ error: 'invalid_transaction_id' });

    const user = uniqueId('anon');
    await recordEvent({ event_type: 'signup', external_user_id: user });
    await recordEvent({ event_type: 'signup', external_user_id: user });
    await t.settle();
    expect(await warehouseRows(t, 'ledger', 'external_user_id = {u:String}', { u: user })).toHaveLength(2);
  });

  it('writes events whose times span more than 100 months, arriving together (one insert; ClickHouse refuses 100+ partitions by default)', async () => {
    const prefix = uniqueId('months');
    const months = Array.from({ length: 130 }, (_, i) => new Date(Date.UTC(2015, i, 15, 12)).toISOString());
    // Queued while no worker runs, so that one batch (one INSERT) takes them all.
    await t.stopWorkers();
    const answers = await Promise.all(months.map((occurred_at, i) => event({ event_type: 'purchase', transaction_id: `${prefix}-${i}`, amount: 1, occurred_at })));
    expect(answers.map((r) => r.statusCode)).toEqual(months.map(() => 200));
    await t.services.queues.drain();
    t.startWorkers();
    await t.settle();
    const rows = await t.services.warehouse.rows<{ n: number }>('SELECT count() AS n FROM ledger WHERE startsWith(transaction_id, {p:String})', { p: prefix });
    expect(rows[0]?.n).toBe(130);
  });

  it('records SDK and pixel events as live (sandbox 0)', async () => {
    const tx = uniqueId('live');
    await recordEvent({ transaction_id: tx, source: 'sdk', amount: 4.99, sandbox: true });
    expect((await ledgerRow(tx)).sandbox).toBe(0);
  });

  it('answers 403 invalid_pixel_key, 422 for malformed bodies and 413 over 64 KiB', async () => {
    const res = await postPublic(t, 'events', { pixel_key: 'pk_nope', transaction_id: uniqueId() });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'invalid_pixel_key' });
    const bad = await t.request({ method: 'POST', url: '/api/public/attribution/events', headers: { 'content-type': 'application/json' }, payload: 'nope' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toEqual({ error: 'invalid_request' }); // {"error":"<code>"} only (docs/api.md#error-codes)
    const big = await event({ transaction_id: uniqueId(), code: 'c'.repeat(65 * 1024) });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toEqual({ error: 'payload_too_large' });
  });
});

describe('events: attribution', () => {
  it('credits this brand’s click token: link and creator, method click, confidence 1', async () => {
    const token = await click(t, { domain: acme.hostname, slug: 'maya' });
    const tx = uniqueId('click');
    await recordEvent({ transaction_id: tx, click_token: token, amount: 30 });
    expect(await ledgerRow(tx)).toMatchObject({
      click_token: token,
      link_id: acme.web.id,
      creator_id: acme.creator.id,
      resolution_method: 'click',
      confidence: 1,
    });
  });

  it('never credits a token minted for another brand’s link', async () => {
    const foreign = await click(t, { domain: globex.hostname, slug: 'maya' });
    const tx = uniqueId('foreign');
    await recordEvent({ transaction_id: tx, click_token: foreign, amount: 30 });
    expect(await ledgerRow(tx)).toMatchObject({ link_id: null, creator_id: null, click_token: null, resolution_method: 'unattributed' });
  });

  it('credits an active creator code, case-insensitive, and counts the credit', async () => {
    const count = async () =>
      (await t.services.db.selectFrom('creator_codes').select('credited_count').where('id', '=', acme.code.id).executeTakeFirstOrThrow()).credited_count;
    const before = await count();
    const tx = uniqueId('code');
    await recordEvent({ transaction_id: tx, code: acme.code.label.toLowerCase(), amount: 15 });
    expect(await ledgerRow(tx)).toMatchObject({
      code_id: acme.code.id,
      code_label: acme.code.label,
      creator_id: acme.creator.id,
      link_id: null,
      resolution_method: 'code',
      confidence: 0.9,
    });
    await event({ transaction_id: tx, code: acme.code.label, amount: 15 }); // duplicate: not counted again
    expect(await count()).toBe(before + 1);
  });

  it('click token wins over code', async () => {
    const token = await click(t, { domain: acme.hostname, slug: 'maya' });
    const tx = uniqueId('both');
    await recordEvent({ transaction_id: tx, click_token: token, code: acme.code.label, amount: 1 });
    expect(await ledgerRow(tx)).toMatchObject({ resolution_method: 'click', code_id: null, link_id: acme.web.id });
  });
});

describe('events: purchase inheritance', () => {
  async function clipboardInstall(installId: string) {
    const token = await click(t, { domain: acme.hostname, slug: 'app', user_agent: IPHONE });
    const res = await postPublic(t, 'installs', { pixel_key: acme.brand.pixel_key, install_id: installId, platform: 'ios', clipboard_token: token });
    expect(res.statusCode).toBe(201);
  }

  it('a purchase without a click token whose external_user_id is an install ID inherits the install’s attribution', async () => {
    const installId = crypto.randomUUID().toUpperCase(); // Swift's UUID().uuidString
    await clipboardInstall(installId);
    const tx = uniqueId('inherit');
    // Compared case-insensitively: a provider may send the UUID in lower case.
    await recordEvent({ transaction_id: tx, source: 'sdk', external_user_id: installId.toLowerCase(), amount: 9.99 });
    expect(await ledgerRow(tx)).toMatchObject({
      link_id: acme.app.id,
      creator_id: acme.creator.id,
      code_id: null,
      resolution_method: 'clipboard',
      confidence: 0.95,
    });
  });

  it('inherits the code of a code install', async () => {
    const installId = uniqueId('codeinst');
    await postPublic(t, 'installs', { pixel_key: acme.brand.pixel_key, install_id: installId, platform: 'android', code: acme.code.label });
    const tx = uniqueId('inherit-code');
    await recordEvent({ transaction_id: tx, external_user_id: installId, amount: 5 });
    expect(await ledgerRow(tx)).toMatchObject({ code_id: acme.code.id, code_label: acme.code.label, creator_id: acme.creator.id, resolution_method: 'code', confidence: 0.9 });
  });

  it('inherits from an install whose id was longer than 128 characters (kept cut there) when the purchase sends the same long id', async () => {
    const installId = `${uniqueId('long')}-${'x'.repeat(150)}`;
    await postPublic(t, 'installs', { pixel_key: acme.brand.pixel_key, install_id: installId, platform: 'ios', code: acme.code.label });
    const tx = uniqueId('inherit-long');
    await recordEvent({ transaction_id: tx, source: 'sdk', external_user_id: installId, amount: 2 });
    expect(await ledgerRow(tx)).toMatchObject({ code_id: acme.code.id, resolution_method: 'code', confidence: 0.9 });
  });

  it('does not inherit with a click token of its own, for other event types, or from another brand’s install', async () => {
    const installId = crypto.randomUUID();
    await clipboardInstall(installId);
    const token = await click(t, { domain: acme.hostname, slug: 'maya' });
    const own = uniqueId('own');
    await recordEvent({ transaction_id: own, external_user_id: installId, click_token: token, amount: 1 });
    expect(await ledgerRow(own)).toMatchObject({ resolution_method: 'click', link_id: acme.web.id });

    const renewal = uniqueId('renewal');
    await recordEvent({ event_type: 'renewal', transaction_id: renewal, external_user_id: installId, amount: 1 });
    expect((await ledgerRow(renewal)).resolution_method).toBe('unattributed');

    const elsewhere = uniqueId('elsewhere');
    await postPublic(t, 'events', { pixel_key: globex.brand.pixel_key, transaction_id: elsewhere, external_user_id: installId, amount: 1 });
    const [row] = await ledgerRows(elsewhere, globex.brand.id);
    expect(row!.resolution_method).toBe('unattributed');
  });
});

describe('events: refunds', () => {
  it('stores refunds negative and copies the attribution of the earlier row of the transaction', async () => {
    const token = await click(t, { domain: acme.hostname, slug: 'maya' });
    const tx = uniqueId('refund');
    await recordEvent({ transaction_id: tx, click_token: token, amount: 25, currency: 'EUR' });
    await recordEvent({ event_type: 'refund', transaction_id: tx, amount: 25, currency: 'EUR' });
    const rows = await ledgerRows(tx);
    expect(rows).toHaveLength(2);
    const refund = rows.find((r) => r.event_type === 'refund')!;
    expect(Number(refund.amount)).toBe(-25);
    expect(refund).toMatchObject({ link_id: acme.web.id, creator_id: acme.creator.id, resolution_method: 'click', click_token: token });
    // A negative amount stays negative.
    const neg = uniqueId('neg');
    await recordEvent({ transaction_id: neg, amount: 7 });
    await recordEvent({ event_type: 'refund', transaction_id: neg, amount: -7 });
    expect((await ledgerRows(neg)).map((r) => Number(r.amount))).toEqual([7, -7]);
  });

  it("a refund takes the purchase's attribution and currency, never a code or currency of its own", async () => {
    const tx = uniqueId('refund-own');
    const token = await click(t, { domain: acme.hostname, slug: 'maya' });
    await recordEvent({ transaction_id: tx, click_token: token, amount: 10, currency: 'GBP' });
    await recordEvent({ event_type: 'refund', transaction_id: tx, code: acme.code.label, amount: 10, currency: 'USD' });
    const refund = (await ledgerRows(tx)).find((r) => r.event_type === 'refund')!;
    expect(refund).toMatchObject({ resolution_method: 'click', code_id: null, link_id: acme.web.id, currency: 'GBP' });
    // An unattributed purchase's refund stays unattributed, whatever code it types.
    const plain = uniqueId('refund-plain');
    await recordEvent({ transaction_id: plain, amount: 10 });
    await recordEvent({ event_type: 'refund', transaction_id: plain, code: acme.code.label, amount: 10 });
    expect((await ledgerRows(plain)).find((r) => r.event_type === 'refund')).toMatchObject({ resolution_method: 'unattributed', code_id: null });
  });

  it('refuses a refund with no public purchase of its transaction, or over its amount: 422 invalid_refund, nothing recorded', async () => {
    const pgRows = (tx: string) => t.services.db.selectFrom('ledger_events').select(['event_type', 'amount']).where('transaction_id', '=', tx).execute();
    const refund = (body: Record<string, unknown>) => event({ event_type: 'refund', ...body });
    // The probes: 999,999,999 against nothing, 1,000,000 typed with a code against a 100 USD purchase.
    const none = uniqueId('no-purchase');
    for (const body of [{ transaction_id: none, amount: 999_999_999 }, { amount: 5 }, { transaction_id: none, amount: 1, code: acme.code.label }]) {
      const res = await refund(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(res.json()).toEqual({ error: 'invalid_refund' });
    }
    expect(await pgRows(none)).toEqual([]);
    const tx = uniqueId('small-purchase');
    await recordEvent({ transaction_id: tx, amount: 100, currency: 'USD' });
    for (const amount of [1_000_000, 100.01, -100.01]) {
      const res = await refund({ transaction_id: tx, amount, code: acme.code.label });
      expect(res.statusCode, String(amount)).toBe(422);
      expect(res.json()).toEqual({ error: 'invalid_refund' });
    }
    // Another event type of the transaction is no purchase.
    const signup = uniqueId('signup');
    await recordEvent({ event_type: 'signup', transaction_id: signup, amount: 0 });
    expect((await refund({ transaction_id: signup, amount: 0 })).json()).toEqual({ error: 'invalid_refund' });
    // Checks in order: the amount's bounds, then the key (a duplicate), then the purchase.
    expect((await refund({ transaction_id: tx, amount: 1_000_000_001 })).json()).toEqual({ error: 'invalid_amount' });
    await recordEvent({ event_type: 'refund', transaction_id: tx, amount: 100 });
    expect((await refund({ transaction_id: tx, amount: 1_000_000 })).json()).toEqual({ ok: true, duplicate: true });
    expect((await pgRows(tx)).map((r) => [r.event_type, Number(r.amount)])).toEqual([
      ['purchase', 100],
      ['refund', -100],
    ]);
  });
});

describe('events: amount bounds', () => {
  /** Postgres ledger rows of a transaction: a refused event leaves none. */
  const pgRows = (tx: string) =>
    t.services.db.selectFrom('ledger_events').select('amount').where('transaction_id', '=', tx).execute();

  it('refuses amounts that are not finite, over 1,000,000,000 in size, or negative outside a refund with 422 invalid_amount, recording nothing', async () => {
    const refused: Record<string, unknown>[] = [
      { amount: -9_999_999_999_998 },
      { amount: -0.01 },
      { amount: '-5' },
      { amount_cents: -100 },
      { event_type: 'renewal', amount: -1 },
      { amount: 1_000_000_000.01 },
      { amount: '1000000001' },
      { amount_cents: 100_000_000_001 },
      { event_type: 'refund', amount: -1_000_000_001 },
      { event_type: 'refund', amount_cents: 100_000_000_001 },
    ];
    for (const money of refused) {
      const tx = uniqueId('bad-amt');
      const res = await event({ transaction_id: tx, ...money });
      expect(res.statusCode, JSON.stringify(money)).toBe(422);
      expect(res.json()).toEqual({ error: 'invalid_amount' });
      expect(await pgRows(tx)).toEqual([]);
    }
    // JSON cannot carry Infinity or NaN, but 1e400 parses to Infinity.
    const tx = uniqueId('inf');
    const res = await t.request({
      method: 'POST',
      url: '/api/public/attribution/events',
      headers: { 'content-type': 'application/json' },
      payload: `{"pixel_key":"${acme.brand.pixel_key}","transaction_id":"${tx}","amount":1e400}`,
    });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({ error: 'invalid_amount' });
    expect(await pgRows(tx)).toEqual([]);
    expect(await ledgerRows(tx)).toEqual([]);
  });

  it('accepts the bounds themselves, and negative refunds stored as -abs', async () => {
    const cases: [Record<string, unknown>, number][] = [
      [{ amount: 1_000_000_000 }, 1_000_000_000],
      [{ amount_cents: 100_000_000_000 }, 1_000_000_000],
      [{ amount: 0 }, 0],
      [{ event_type: 'refund', amount: -1_000_000_000 }, -1_000_000_000],
      [{ event_type: 'refund', amount_cents: -250 }, -2.5],
      [{ event_type: 'refund', amount: '-3.5' }, -3.5],
    ];
    for (const [money, stored] of cases) {
      const tx = uniqueId('edge-amt');
      if (money.event_type === 'refund') {
        await recordEvent({ transaction_id: tx, amount: 1_000_000_000 });
        await recordEvent({ transaction_id: tx, ...money });
        expect(Number((await ledgerRows(tx)).find((r) => r.event_type === 'refund')!.amount), JSON.stringify(money)).toBe(stored);
        continue;
      }
      await recordEvent({ transaction_id: tx, ...money });
      expect((await ledgerRow(tx)).amount, JSON.stringify(money)).toBe(stored);
    }
  });
});
