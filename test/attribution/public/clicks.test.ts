import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { clickTokenLinkId } from '../../../src/attribution/links/click-token';
import { keyedHash } from '../../../src/secrets';
import { createLink } from '../../helpers/attribution-fixtures';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { ANDROID, type AttributionBrand, attributionBrand, DESKTOP, IPAD, IPHONE, IPOD, postPublic, uniqueId, warehouseRows } from './setup';

let t: TestService;
let acme: AttributionBrand;
beforeAll(async () => {
  // Tests inject from 127.0.0.1: the redirect application TRUST_PROXY lists, which may name a visitor's IP.
  t = await startTestService({ env: { TRUST_PROXY: '127.0.0.1' } });
  acme = await attributionBrand(t, 'Acme');
});
afterAll(async () => destroyTestService(t));

type Click = Record<string, string | number>;
const clickRow = async (token: string): Promise<Click> => {
  await t.settle();
  const rows = await warehouseRows<Click>(t, 'clicks', 'click_token = {token:String}', { token });
  expect(rows).toHaveLength(1);
  return rows[0]!;
};

describe('POST /api/public/attribution/clicks: resolution', () => {
  it('resolves domain and slug to the link and answers the smart-page data', async () => {
    const res = await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'maya' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.click_token).toMatch(/^svc_[A-Za-z0-9_-]{43}$/);
    expect(body).toMatchObject({ link_type: 'web', brand_name: 'Acme', platform_hint: null, app: null });
    expect(clickTokenLinkId(t.config.secretKey, body.click_token)).toBe(acme.web.id);
    const row = await clickRow(body.click_token);
    expect(row).toMatchObject({ brand_id: acme.brand.id, link_id: acme.web.id, creator_id: acme.creator.id, link_type: 'web' });
  });

  it('falls back to the root link for an unknown slug, and serves the root for an empty one', async () => {
    for (const slug of ['nobody', '', undefined]) {
      const res = await postPublic(t, 'clicks', { domain: acme.hostname, slug });
      expect(res.statusCode).toBe(200);
      expect(clickTokenLinkId(t.config.secretKey, res.json().click_token)).toBe(acme.root.id);
      expect(res.json().redirect_url).toMatch(/^https:\/\/acme\.example\/home\?svc_cid=svc_/);
    }
  });

  it('strips www., ignores case, a port, surrounding slashes and a query in the slug', async () => {
    const res = await postPublic(t, 'clicks', { domain: `WWW.${acme.hostname.toUpperCase()}:443`, slug: '/Maya/?x=1' });
    expect(res.statusCode).toBe(200);
    expect(clickTokenLinkId(t.config.secretKey, res.json().click_token)).toBe(acme.web.id);
  });

  it('answers 404 link_not_found for an unknown domain, a domain without root link, or no domain', async () => {
    const bare = await t.request({
      method: 'POST',
      url: '/api/internal/attribution-domains',
      admin: true,
      payload: { hostname: `bare-${Date.now()}.link`, brand_id: acme.brand.id },
    });
    for (const body of [{ domain: 'unknown-domain.example', slug: 'maya' }, { domain: bare.json().hostname, slug: 'x' }, {}]) {
      const res = await postPublic(t, 'clicks', body);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'link_not_found' });
    }
  });

  it('does not serve an inactive link, and the root fallback still serves other slugs', async () => {
    const paused = await createLink(t, { ...acme.owner, slug: 'paused' });
    const patch = await t.request({ method: 'PATCH', url: `/api/internal/attribution-links/${paused.id}`, admin: true, payload: { active: false } });
    expect(patch.statusCode).toBe(200);
    const res = await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'paused' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'link_not_found' });
    const other = await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'other' });
    expect(clickTokenLinkId(t.config.secretKey, other.json().click_token)).toBe(acme.root.id);

    // Reactivated: served again on the next click.
    await t.request({ method: 'PATCH', url: `/api/internal/attribution-links/${paused.id}`, admin: true, payload: { active: true } });
    expect((await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'paused' })).statusCode).toBe(200);
  });

  it('follows link changes made by another process (served links are cached until Postgres notifies a change)', async () => {
    const elsewhere = await createLink(t, { ...acme.owner, slug: 'elsewhere' });
    const click = () => postPublic(t, 'clicks', { domain: acme.hostname, slug: 'elsewhere' });
    expect((await click()).statusCode).toBe(200); // now cached
    // Another API process or an operator's SQL: only the link_changes notification tells this process.
    const { db } = t.services;
    await db.updateTable('links').set({ active: false }).where('id', '=', elsewhere.id).execute();
    await expect.poll(async () => (await click()).statusCode, { timeout: 2000 }).toBe(404);
    await db.updateTable('links').set({ active: true, destination_url: 'https://acme.example/moved' }).where('id', '=', elsewhere.id).execute();
    await expect.poll(async () => (await click()).json().redirect_url as string, { timeout: 2000 }).toMatch(/^https:\/\/acme\.example\/moved\?svc_cid=/);
    // A brand renamed elsewhere is answered under its new name.
    await db.updateTable('brands').set({ name: 'Acme Renamed' }).where('id', '=', acme.brand.id).execute();
    await expect.poll(async () => (await click()).json().brand_name, { timeout: 2000 }).toBe('Acme Renamed');
    await db.updateTable('brands').set({ name: 'Acme' }).where('id', '=', acme.brand.id).execute();
    await expect.poll(async () => (await click()).json().brand_name, { timeout: 2000 }).toBe('Acme');
  });

  it('reads every click through to Postgres while the change feed is down, and caches again once it is back', async () => {
    const feed = t.services.linkChanges;
    const reads = vi.spyOn(t.services.db, 'selectFrom');
    const click = () => postPublic(t, 'clicks', { domain: acme.hostname, slug: 'maya' });
    await click();
    reads.mockClear();
    await click();
    expect(reads).not.toHaveBeenCalled(); // answered from the cache
    await feed.close();
    try {
      expect(feed.live).toBe(false);
      await click();
      await click();
      expect(reads).toHaveBeenCalledTimes(2);
    } finally {
      await feed.start();
      reads.mockRestore();
    }
    expect(feed.live).toBe(true);
  });

  it('finds out when Postgres drops the change feed connection, reads through meanwhile and listens again', async () => {
    const feed = t.services.linkChanges;
    expect(feed.live).toBe(true);
    const { db } = t.services;
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
              WHERE datname = current_database() AND application_name = 'svc-change-feed:link_changes'`.execute(db);
    await expect.poll(() => feed.live, { timeout: 2000, interval: 5 }).toBe(false);
    await expect.poll(() => feed.live, { timeout: 5000 }).toBe(true);
    // Listening again: a change made in SQL reaches the clicks.
    const again = await createLink(t, { ...acme.owner, slug: 'again' });
    expect((await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'again' })).statusCode).toBe(200);
    await db.updateTable('links').set({ active: false }).where('id', '=', again.id).execute();
    await expect.poll(async () => (await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'again' })).statusCode, { timeout: 2000 }).toBe(404);
  });

  it('answers 404 for unknown slugs when the root link is inactive', async () => {
    const other = await attributionBrand(t, 'Rootless');
    await t.request({ method: 'PATCH', url: `/api/internal/attribution-links/${other.root.id}`, admin: true, payload: { active: false } });
    expect((await postPublic(t, 'clicks', { domain: other.hostname, slug: 'nobody' })).statusCode).toBe(404);
    expect((await postPublic(t, 'clicks', { domain: other.hostname, slug: 'maya' })).statusCode).toBe(200);
  });

  it('mints an unguessable token per click', async () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 20; i++) tokens.add((await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'maya' })).json().click_token);
    expect(tokens.size).toBe(20);
  });
});

describe('clicks: what is stored and forwarded', () => {
  it('stores the UTM values and forwards them with svc_cid to the web destination, keeping its own query', async () => {
    const query = '?utm_source=tiktok&utm_medium=social&utm_campaign=spring&utm_term=shoes&utm_content=video1&fbclid=zzz';
    const res = await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'maya', query });
    const { redirect_url, click_token } = res.json();
    const url = new URL(redirect_url);
    expect(url.origin + url.pathname).toBe('https://acme.example/shop');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      ref: 'maya',
      utm_source: 'tiktok',
      utm_medium: 'social',
      utm_campaign: 'spring',
      utm_term: 'shoes',
      utm_content: 'video1',
      svc_cid: click_token,
    });
    expect(await clickRow(click_token)).toMatchObject({
      utm_source: 'tiktok',
      utm_medium: 'social',
      utm_campaign: 'spring',
      utm_term: 'shoes',
      utm_content: 'video1',
    });
  });

  it('takes the referrer from the body, else from the Referer header', async () => {
    const fromBody = await postPublic(t, 'clicks', { domain: acme.hostname, referrer: 'https://tiktok.com/@maya' }, { headers: { referer: 'https://ignored.example/' } });
    expect((await clickRow(fromBody.json().click_token)).referrer).toBe('https://tiktok.com/@maya');
    const fromHeader = await postPublic(t, 'clicks', { domain: acme.hostname }, { headers: { referer: 'https://instagram.com/maya' } });
    expect((await clickRow(fromHeader.json().click_token)).referrer).toBe('https://instagram.com/maya');
    const none = await postPublic(t, 'clicks', { domain: acme.hostname });
    expect((await clickRow(none.json().click_token)).referrer).toBe('');
  });

  it('detects the platform from the user agent', async () => {
    const cases: [string | undefined, string | null][] = [
      [IPHONE, 'ios'],
      [IPAD, 'ios'],
      [IPOD, 'ios'],
      [ANDROID, 'android'],
      [DESKTOP, 'desktop'],
      [undefined, null],
    ];
    for (const [user_agent, platform] of cases) {
      const res = await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'maya', user_agent });
      expect(res.json().platform_hint).toBe(platform);
      expect((await clickRow(res.json().click_token)).platform).toBe(platform ?? '');
    }
  });

  it('stores a two-letter country in upper case, and nothing for anything else', async () => {
    for (const [country, stored] of [
      ['de', 'DE'],
      ['US', 'US'],
      ['USA', ''],
      ['', ''],
    ]) {
      const res = await postPublic(t, 'clicks', { domain: acme.hostname, country });
      expect((await clickRow(res.json().click_token)).country).toBe(stored);
    }
  });

  it('keeps the IP only as a keyed hash and only for app links', async () => {
    const ip = '203.0.113.77';
    const app = await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'app', ip, user_agent: IPHONE });
    const web = await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'maya', ip, user_agent: IPHONE });
    const appRow = await clickRow(app.json().click_token);
    expect(appRow.ip_hash).toBe(keyedHash(t.config.secretKey, `ip:${ip}`));
    expect((await clickRow(web.json().click_token)).ip_hash).toBe('');
    const withRawIp = await t.services.warehouse.rows<{ n: number }>(
      "SELECT count() AS n FROM clicks WHERE position(arrayStringConcat([click_token, domain, slug, referrer, ip_hash, utm_source, utm_medium, utm_campaign, utm_term, utm_content], ' '), {ip:String}) > 0",
      { ip },
    );
    expect(withRawIp[0]!.n).toBe(0);
  });
});

describe('POST /clicks: whose IP a click keeps', () => {
  const installFrom = (remoteAddress: string) =>
    postPublic(t, 'installs', { pixel_key: acme.brand.pixel_key, install_id: uniqueId(), platform: 'ios' }, { remoteAddress });

  it('takes the body’s ip only from a trusted proxy: a caller TRUST_PROXY does not list cannot plant one', async () => {
    const planted = '203.0.113.88';
    const caller = '198.51.100.77';
    const res = await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'app', ip: planted, user_agent: IPHONE }, { remoteAddress: caller });
    expect(res.statusCode).toBe(200);
    // The click is the caller's own: an install from the planted address is not matched, one from the caller's is.
    expect((await clickRow(res.json().click_token)).ip_hash).toBe(keyedHash(t.config.secretKey, `ip:${caller}`));
    expect((await installFrom(planted)).json().install.resolution_method).toBe('unattributed');
    expect((await installFrom(caller)).json().install).toMatchObject({ resolution_method: 'ip', link: { id: acme.app.id } });
  });

  it('from a trusted proxy, matches installs from the named ip, an IPv6 visitor anywhere in its /64', async () => {
    await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'app', ip: '2001:db8:aa:bb::1', user_agent: IPHONE });
    expect((await installFrom('2001:db8:aa:bb:1234:5678:9abc:def0')).json().install.resolution_method).toBe('ip');
    expect((await installFrom('2001:db8:aa:bc::1')).json().install.resolution_method).toBe('unattributed');
  });
});

describe('clicks: app links', () => {
  it('sends phones to their store and answers the smart install page data', async () => {
    const ios = (await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'app', user_agent: IPHONE, query: 'utm_source=yt' })).json();
    expect(ios.link_type).toBe('app');
    expect(ios.redirect_url).toBe('https://apps.apple.com/app/id123456789');
    expect(ios.app).toEqual({
      ios_url: 'https://apps.apple.com/app/id123456789',
      android_url: 'https://play.google.com/store/apps/details?id=com.acme.app&hl=en',
      android_package: 'com.acme.app',
      fallback_url: `https://acme.example/app?utm_source=yt&svc_cid=${ios.click_token}`,
    });
    const android = (await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'app', user_agent: ANDROID })).json();
    expect(android.redirect_url).toBe('https://play.google.com/store/apps/details?id=com.acme.app&hl=en');
    const desktop = (await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'app', user_agent: DESKTOP })).json();
    expect(desktop.redirect_url).toBe(desktop.app.fallback_url);
    expect(desktop.redirect_url).toContain(`svc_cid=${desktop.click_token}`);
  });

  it('sends a phone without a store URL for its platform to the web fallback', async () => {
    const iosOnly = await createLink(t, {
      ...acme.owner,
      slug: 'ios-only',
      type: 'app',
      destination_url: 'https://acme.example/app',
      ios_url: 'https://apps.apple.com/app/id1',
    });
    const res = (await postPublic(t, 'clicks', { domain: acme.hostname, slug: iosOnly.slug, user_agent: ANDROID })).json();
    expect(res.redirect_url).toBe(res.app.fallback_url);
    expect(res.app.android_package).toBeNull();
  });
});

describe('clicks: request limits', () => {
  it('refuses bodies over 64 KiB with 413 payload_too_large', async () => {
    const res = await postPublic(t, 'clicks', { domain: acme.hostname, query: 'x'.repeat(70 * 1024) });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ error: 'payload_too_large' });
  });

  it('answers 422 for malformed JSON and for a body that is not an object; reads JSON sent as text/plain', async () => {
    const bad = await t.request({ method: 'POST', url: '/api/public/attribution/clicks', headers: { 'content-type': 'application/json' }, payload: '{"domain":' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toEqual({ error: 'invalid_request' }); // {"error":"<code>"} only (docs/api.md#error-codes)
    const beacon = await t.request({
      method: 'POST',
      url: '/api/public/attribution/clicks',
      headers: { 'content-type': 'text/plain;charset=UTF-8' },
      payload: JSON.stringify({ domain: acme.hostname }),
    });
    expect(beacon.statusCode).toBe(200);
    const array = await postPublic(t, 'clicks', [acme.hostname]);
    expect(array.statusCode).toBe(422);
    expect(array.json()).toEqual({ error: 'invalid_request' });
  });

  it('allows any origin (the pixel and the redirect page run on other sites)', async () => {
    const res = await postPublic(t, 'clicks', { domain: acme.hostname }, { headers: { origin: 'https://shop.example' } });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const preflight = await t.request({ method: 'OPTIONS', url: '/api/public/attribution/events' });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-methods']).toBe('POST');
  });
});
