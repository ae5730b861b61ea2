import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDomain, createLink } from '../../helpers/attribution-fixtures';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { createPortalUser, portalLogin } from '../../portal/helpers';
import { connect, deliver } from '../webhooks/helpers';
import { type AttributionBrand, attributionBrand, click, IPHONE, postPublic, uniqueId, warehouseRows } from '../public/setup';

/** POST /opens: an installed app reports the creator link it was opened with; the click it records; the credit it gives. */

let t: TestService;
let acme: AttributionBrand;
let globex: AttributionBrand;
let deepLinked: { id: number; slug: string };
beforeAll(async () => {
  t = await startTestService({ env: { TRUST_PROXY: '127.0.0.1' } });
  acme = await attributionBrand(t, 'Acme');
  globex = await attributionBrand(t, 'Globex');
  const res = await t.request({
    method: 'POST',
    url: '/api/internal/attribution-links',
    admin: true,
    payload: {
      ...acme.owner,
      slug: 'Recipes/42',
      type: 'app',
      destination_url: 'https://acme.example/recipes/42',
      ios_url: 'https://apps.apple.com/app/id123456789',
      deep_link: 'acme://recipes/42',
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  deepLinked = { ...res.json(), id: Number(res.json().id) };
});
afterAll(async () => destroyTestService(t));

const open = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.request({
    method: 'POST',
    url: '/api/public/attribution/opens',
    payload: { pixel_key: acme.brand.pixel_key, platform: 'ios', install_id: uniqueId('inst'), ...body },
    headers,
  });
const event = (body: Record<string, unknown>) => postPublic(t, 'events', { pixel_key: acme.brand.pixel_key, ...body });
const ledgerRow = (transactionId: string) =>
  t.services.db.selectFrom('ledger_events').selectAll().where('brand_id', '=', acme.brand.id).where('transaction_id', '=', transactionId).executeTakeFirstOrThrow();

describe('POST /api/public/attribution/opens', () => {
  it('resolves the URL as the link host does and answers the click token, the deep link and the link', async () => {
    const res = await open({ url: `https://WWW.${acme.hostname.toUpperCase()}:443/recipes%2F42?utm_source=tiktok&utm_campaign=spring` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      click_token: expect.stringMatching(/^svc_[A-Za-z0-9_-]{43}$/),
      deep_link: 'acme://recipes/42',
      link: { id: deepLinked.id, domain: acme.hostname, slug: 'Recipes/42' },
    });
    // An unknown slug falls back to the root link; a link without a deep link answers null.
    const root = await open({ url: `http://${acme.hostname}/no-such-slug` });
    expect(root.json()).toMatchObject({ deep_link: null, link: { id: acme.root.id, slug: '' } });
  });

  it('records a click of the link: never a bot, never IP-matched, on the reported platform', async () => {
    const ip = '198.51.100.90';
    const res = await open(
      { url: `https://${acme.hostname}/app?utm_source=ig`, platform: 'android' },
      { 'user-agent': 'Googlebot/2.1 (+http://www.google.com/bot.html)', 'x-forwarded-for': ip },
    );
    expect(res.statusCode, res.body).toBe(200);
    const token = res.json().click_token;
    await t.settle();
    const rows = await warehouseRows(t, 'clicks', 'click_token = {token:String}', { token });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ brand_id: acme.brand.id, link_id: acme.app.id, bot: 0, platform: 'android', utm_source: 'ig', ip_hash: '' });
    // The token credits like any person's click token.
    const tx = uniqueId('tx');
    expect((await event({ transaction_id: tx, amount: 5, click_token: token })).statusCode).toBe(200);
    expect(await ledgerRow(tx)).toMatchObject({ resolution_method: 'click', link_id: acme.app.id });
    // No install from the device's address is matched to the open's click.
    const install = await postPublic(t, 'installs', { pixel_key: acme.brand.pixel_key, install_id: uniqueId('inst'), platform: 'android' }, { remoteAddress: ip });
    expect(install.json().install.resolution_method).toBe('unattributed');
  });

  it('answers 404 link_not_found for another brand’s link, an unknown domain, an inactive link, a path no link has', async () => {
    const paused = await createLink(t, { ...acme.owner, slug: uniqueId('paused') });
    await t.request({ method: 'PATCH', url: `/api/internal/attribution-links/${paused.id}`, admin: true, payload: { active: false } });
    const bare = await createDomain(t, { hostname: `bare-${uniqueId()}.example`, brand_id: acme.brand.id });
    for (const url of [
      `https://${globex.hostname}/app`,
      'https://unknown-domain.example/app',
      `https://${acme.hostname}/${paused.slug}`,
      `https://${bare.hostname}/anything`,
      `https://${acme.hostname}/.well-known/apple-app-site-association`,
    ]) {
      const res = await open({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual({ error: 'link_not_found' });
    }
  });

  it('answers 403 invalid_pixel_key, then 422 install_id_required, invalid_platform, invalid_url', async () => {
    const url = `https://${acme.hostname}/app`;
    expect((await open({ url, pixel_key: 'pk_nope' })).json()).toEqual({ error: 'invalid_pixel_key' });
    expect((await open({ url, pixel_key: 'pk_nope' })).statusCode).toBe(403);
    for (const install_id of [undefined, '', '   ', 42]) {
      const res = await open({ url, install_id });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual({ error: 'install_id_required' });
    }
    for (const platform of [undefined, 'web', '', 7]) {
      expect((await open({ url, platform })).json()).toEqual({ error: 'invalid_platform' });
    }
    expect((await open({ url, platform: ' IOS ' })).statusCode).toBe(200);
    for (const bad of [undefined, '', 'acme.link/app', '/app', 'acme://recipes/42', 'ftp://x.example/a', 'javascript:alert(1)', 12]) {
      const res = await open({ url: bad });
      expect(res.statusCode, String(bad)).toBe(422);
      expect(res.json()).toEqual({ error: 'invalid_url' });
    }
  });
});

describe('credit after an open', () => {
  /** An install recorded for Acme (unattributed, or by a code), then an open of `slug`'s link by it. */
  async function installedThenOpened(slug: string, installBody: Record<string, unknown> = {}) {
    const installId = uniqueId('inst').toUpperCase();
    const res = await postPublic(t, 'installs', { pixel_key: acme.brand.pixel_key, install_id: installId, platform: 'ios', ...installBody });
    expect(res.statusCode).toBe(201);
    expect((await open({ url: `https://${acme.hostname}/${slug}`, install_id: installId })).statusCode).toBe(200);
    return installId;
  }

  it('a purchase right after the open is credited to the opened link as a click token credits, over the install’s own attribution', async () => {
    const installId = await installedThenOpened('maya', { code: acme.code.label });
    const tx = uniqueId('tx');
    expect((await event({ transaction_id: tx, amount: 20, external_user_id: installId, source: 'sdk' })).json()).toEqual({ ok: true, duplicate: false });
    expect(await ledgerRow(tx)).toMatchObject({ resolution_method: 'click', confidence: 1, link_id: acme.web.id, creator_id: acme.creator.id, code_id: null });
  });

  it('the latest open in the 7 days up to the purchase wins; older or later opens do not credit', async () => {
    const installId = await installedThenOpened('maya');
    await open({ url: `https://${acme.hostname}/app`, install_id: installId });
    const tx = uniqueId('tx');
    await event({ transaction_id: tx, amount: 1, external_user_id: installId });
    expect((await ledgerRow(tx)).link_id).toBe(acme.app.id);
    // A purchase dated before the opens, or 8 days after them, is not credited by them.
    const before = uniqueId('tx');
    await event({ transaction_id: before, amount: 1, external_user_id: installId, occurred_at: new Date(Date.now() - 60_000).toISOString() });
    expect((await ledgerRow(before)).resolution_method).toBe('unattributed');
    const later = uniqueId('tx');
    await event({ transaction_id: later, amount: 1, external_user_id: installId, occurred_at: new Date(Date.now() + 8 * 86_400_000).toISOString() });
    expect((await ledgerRow(later)).resolution_method).toBe('unattributed');
  });

  it('matches the install id as inheritance does, needs the install recorded, never credits renewals, and a token of its own wins', async () => {
    const installId = await installedThenOpened('maya');
    const lower = uniqueId('tx');
    await event({ transaction_id: lower, amount: 1, external_user_id: installId.toLowerCase() });
    // Only UUID-shaped ids compare case-insensitively (as for inheritance): this one is not.
    expect((await ledgerRow(lower)).resolution_method).toBe('unattributed');
    const exact = uniqueId('tx');
    await event({ transaction_id: exact, amount: 1, external_user_id: installId });
    expect((await ledgerRow(exact)).link_id).toBe(acme.web.id);

    const renewal = uniqueId('tx');
    await event({ event_type: 'renewal', transaction_id: renewal, amount: 1, external_user_id: installId });
    expect((await ledgerRow(renewal)).resolution_method).toBe('unattributed');

    const own = await click(t, { domain: acme.hostname, slug: 'app', user_agent: IPHONE });
    const withToken = uniqueId('tx');
    await event({ transaction_id: withToken, amount: 1, external_user_id: installId, click_token: own });
    expect(await ledgerRow(withToken)).toMatchObject({ resolution_method: 'click', link_id: acme.app.id, click_token: own });

    // An open by an install id the brand never recorded (a customer number) credits nothing.
    const stranger = uniqueId('customer');
    await open({ url: `https://${acme.hostname}/maya`, install_id: stranger });
    const tx = uniqueId('tx');
    await event({ transaction_id: tx, amount: 1, external_user_id: stranger });
    expect((await ledgerRow(tx)).resolution_method).toBe('unattributed');
  });

  it('a provider webhook’s purchase a second after the open is credited to it too', async () => {
    const uuid = '7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f';
    expect((await postPublic(t, 'installs', { pixel_key: acme.brand.pixel_key, install_id: uuid.toUpperCase(), platform: 'ios' })).statusCode).toBe(201);
    await open({ url: `https://${acme.hostname}/app`, install_id: uuid.toUpperCase() });
    await createPortalUser(t, acme.brand.id, 'opens@acme.test');
    const rc = await connect(t, await portalLogin(t, 'opens@acme.test'), { provider: 'revenuecat', signing_secret: 'rc-secret-opens' });
    const now = Date.now() + 1000;
    const body = JSON.stringify({
      api_version: '1.0',
      event: {
        id: '9f1c2d3e-0000-4000-8000-00000000a001',
        type: 'INITIAL_PURCHASE',
        app_id: 'app7f3a',
        app_user_id: uuid,
        store: 'APP_STORE',
        environment: 'PRODUCTION',
        period_type: 'NORMAL',
        transaction_id: '2000000871299001',
        original_transaction_id: '2000000871299001',
        purchased_at_ms: now,
        event_timestamp_ms: now,
        currency: 'EUR',
        price: 10.84,
        price_in_purchased_currency: 9.99,
      },
    });
    const res = await deliver(t, rc.webhook_url, body, { authorization: 'rc-secret-opens' });
    expect(res).toMatchObject({ status: 200, body: { ok: true, recorded: 1 } });
    const row = await t.services.db.selectFrom('ledger_events').selectAll().where('brand_id', '=', acme.brand.id).where('source', '=', 'revenuecat').executeTakeFirstOrThrow();
    expect(row).toMatchObject({ event_type: 'purchase', resolution_method: 'click', confidence: 1, link_id: acme.app.id });
  });

  it('UUID install ids match in either case', async () => {
    const uuid = '3F2B9C1E-6A7D-4E21-9B55-0C7D8E9FA012';
    expect((await postPublic(t, 'installs', { pixel_key: acme.brand.pixel_key, install_id: uuid, platform: 'ios' })).statusCode).toBe(201);
    await open({ url: `https://${acme.hostname}/maya`, install_id: uuid });
    const tx = uniqueId('tx');
    await event({ transaction_id: tx, amount: 1, external_user_id: uuid.toLowerCase() });
    expect((await ledgerRow(tx)).link_id).toBe(acme.web.id);
  });
});
