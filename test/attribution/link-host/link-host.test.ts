import { type AddressInfo, connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickTokenLinkId } from '../../../src/attribution/links/click-token';
import { createDomain, createLink } from '../../helpers/attribution-fixtures';
import { createBrand } from '../../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { createPortalUser, portal, portalLogin } from '../../portal/helpers';
import { ANDROID, type AttributionBrand, attributionBrand, DESKTOP, IPHONE, postPublic, uniqueId, warehouseRows } from '../public/setup';

/** The link host (docs/link-host.md): GET and HEAD on an attribution domain, through inject with Host headers. */
let t: TestService;
let acme: AttributionBrand;
beforeAll(async () => {
  t = await startTestService();
  acme = await attributionBrand(t, 'Acme');
});
afterAll(async () => destroyTestService(t));

type Visit = { host?: string; path: string; method?: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE'; headers?: Record<string, string>; remoteAddress?: string };
const visit = ({ host = acme.hostname, path, method = 'GET', headers = {}, remoteAddress }: Visit) =>
  t.request({ method, url: path, headers: { host, 'user-agent': IPHONE, ...headers }, remoteAddress });

type ClickRow = Record<string, string | number>;
const clicksOf = async (linkId: number) => {
  await t.settle();
  return warehouseRows<ClickRow>(t, 'clicks', 'link_id = {id:UInt64}', { id: linkId });
};
const tokenIn = (location: string) => new URL(location).searchParams.get('svc_cid');
const pageToken = (html: string) => html.match(/<main data-click-token="(svc_[^"]+)"/)?.[1] ?? null;

describe('web links', () => {
  it('redirects 302 to the destination with the UTM values and the click token, uncached, and records the click', async () => {
    const res = await visit({
      path: '/maya?utm_source=tiktok&utm_campaign=spring%20launch',
      headers: { 'user-agent': DESKTOP, referer: 'https://www.tiktok.com/@maya', 'cf-ipcountry': 'de' },
    });
    expect(res.statusCode).toBe(302);
    expect(res.headers['cache-control']).toBe('no-store');
    const location = new URL(res.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe('https://acme.example/shop');
    expect(Object.fromEntries(location.searchParams)).toMatchObject({ ref: 'maya', utm_source: 'tiktok', utm_campaign: 'spring launch' });
    const token = location.searchParams.get('svc_cid')!;
    expect(clickTokenLinkId(t.config.secretKey, token)).toBe(acme.web.id);
    const rows = await clicksOf(acme.web.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      click_token: token,
      brand_id: acme.brand.id,
      utm_source: 'tiktok',
      utm_campaign: 'spring launch',
      referrer: 'https://www.tiktok.com/@maya',
      country: 'DE',
      platform: 'desktop',
      bot: 0,
      ip_hash: '', // web links keep no IP
    });
  });

  it('takes X-Country when CF-IPCountry is absent, and falls back to the root link for an unknown slug', async () => {
    const res = await visit({ path: '/nobody-here', headers: { 'x-country': 'fr' } });
    expect(res.statusCode).toBe(302);
    const token = tokenIn(res.headers.location as string)!;
    expect(clickTokenLinkId(t.config.secretKey, token)).toBe(acme.root.id);
    const row = (await clicksOf(acme.root.id)).find((r) => r.click_token === token);
    expect(row).toMatchObject({ country: 'FR', platform: 'ios' });
  });

  it('matches hosts in any casing, with a port, a trailing dot or www., and percent-encoded slugs', async () => {
    for (const host of [acme.hostname.toUpperCase(), `${acme.hostname}:8443`, `${acme.hostname}.`, `${acme.hostname}:`, `www.${acme.hostname}`, `WWW.${acme.hostname}.:80`]) {
      const res = await visit({ host, path: '/%4D%61ya/' });
      expect(res.statusCode, host).toBe(302);
      expect(clickTokenLinkId(t.config.secretKey, tokenIn(res.headers.location as string)!), host).toBe(acme.web.id);
    }
  });

  it('serves an internationalised domain by its Unicode and punycode names', async () => {
    const unicode = `bücher-${uniqueId('x').slice(2)}.link`;
    const domain = await createDomain(t, { hostname: unicode, brand_id: acme.brand.id });
    expect(domain.hostname).toMatch(/^xn--/);
    const link = await createLink(t, { brand_id: acme.brand.id, creator_id: acme.creator.id, domain_id: domain.id, slug: 'buch', destination_url: 'https://acme.example/buch' });
    for (const host of [domain.hostname, unicode, unicode.toUpperCase()]) {
      const res = await visit({ host, path: '/buch' });
      expect(res.statusCode, host).toBe(302);
      expect(clickTokenLinkId(t.config.secretKey, tokenIn(res.headers.location as string)!), host).toBe(link.id);
    }
  });
});

describe('app links: the smart install page', () => {
  it('answers the page with the brand, both stores (the visitor’s first), the web fallback and the click token', async () => {
    const res = await visit({ path: '/app?utm_source=ig', remoteAddress: '203.0.113.9' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    const html = res.body;
    const token = pageToken(html)!;
    expect(clickTokenLinkId(t.config.secretKey, token)).toBe(acme.app.id);
    expect(html).toContain('<h1>Acme</h1>');
    expect(html).toContain('<meta property="og:title" content="Acme">');
    const appStore = html.indexOf('href="https://apps.apple.com/app/id123456789"');
    const play = html.indexOf('href="https://play.google.com/store/apps/details?id=com.acme.app&amp;hl=en"');
    expect(appStore).toBeGreaterThan(0);
    expect(play).toBeGreaterThan(appStore); // an iPhone sees the App Store first
    expect(html).toMatch(/<a class="web" href="https:\/\/acme\.example\/app\?utm_source=ig&amp;svc_cid=svc_[^"]+">Continue on the web<\/a>/);

    // The one script and style run under this response's nonce; nothing else may load.
    const csp = res.headers['content-security-policy'] as string;
    const nonce = csp.match(/script-src 'nonce-([^']+)'/)![1]!;
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).toContain(`<style nonce="${nonce}">`);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("img-src 'none'");
    expect(html).not.toMatch(/<script(?![^>]*nonce)/);
    const again = await visit({ path: '/app' });
    expect(again.headers['content-security-policy']).not.toBe(csp);

    const row = (await clicksOf(acme.app.id)).find((r) => r.click_token === token);
    expect(row).toMatchObject({ link_type: 'app', platform: 'ios', utm_source: 'ig', bot: 0 });
    expect(row!.ip_hash).not.toBe(''); // app links keep the IP as a keyed hash, for the install IP match
  });

  it('puts Google Play first for Android visitors', async () => {
    const html = (await visit({ path: '/app', headers: { 'user-agent': ANDROID } })).body;
    expect(html.indexOf('Get it on Google Play')).toBeLessThan(html.indexOf('Download on the App Store'));
  });

  it('shows the brand logo, allowed by its origin alone, and as og:image', async () => {
    const brand = await createBrand(t, { name: 'Lumen <Labs>', logo_url: 'https://cdn.lumen.example/logo.png' });
    const domain = await createDomain(t, { hostname: `${uniqueId('lumen')}.link`, brand_id: brand.id });
    await createLink(t, {
      brand_id: brand.id,
      creator_id: acme.creator.id,
      domain_id: domain.id,
      type: 'app',
      ios_url: 'https://apps.apple.com/app/id42',
      android_url: null,
    });
    const res = await visit({ host: domain.hostname, path: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<img class="logo" src="https://cdn.lumen.example/logo.png" alt="Lumen &lt;Labs&gt; logo"');
    expect(res.body).toContain('<meta property="og:image" content="https://cdn.lumen.example/logo.png">');
    expect(res.body).toContain('<h1>Lumen &lt;Labs&gt;</h1>');
    expect(res.body).not.toContain('Get it on Google Play'); // no Android URL, no button
    expect(res.headers['content-security-policy']).toContain('img-src https://cdn.lumen.example;');
  });

  it('an app-link click credits an install from the same address (IP match), through the same path as POST /clicks', async () => {
    await visit({ path: '/app', remoteAddress: '198.51.100.77' });
    const res = await postPublic(
      t,
      'installs',
      { pixel_key: acme.brand.pixel_key, install_id: uniqueId('ip'), platform: 'ios' },
      { remoteAddress: '198.51.100.77' },
    );
    expect(res.statusCode).toBe(201);
    expect(res.json().install).toMatchObject({ resolution_method: 'ip', confidence: 0.6, link: { id: acme.app.id } });
  });
});

describe('what is not a click', () => {
  it('answers 404 HTML for a path with no link (no such slug, no root link) and for an inactive link', async () => {
    const bare = await createDomain(t, { hostname: `${uniqueId('bare')}.link`, brand_id: acme.brand.id });
    const paused = await createLink(t, { ...acme.owner, slug: 'paused' });
    const patch = await t.request({ method: 'PATCH', url: `/api/internal/attribution-links/${paused.id}`, admin: true, payload: { active: false } });
    expect(patch.statusCode).toBe(200);
    for (const [host, path] of [
      [bare.hostname, '/anything'],
      [bare.hostname, '/'],
      [acme.hostname, '/paused'],
    ] as const) {
      const res = await visit({ host, path });
      expect(res.statusCode, path).toBe(404);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain('This link is not active');
    }
    expect(await clicksOf(paused.id)).toHaveLength(0);
  });

  it('answers HEAD as GET would, without recording or a click token', async () => {
    const before = [(await clicksOf(acme.web.id)).length, (await clicksOf(acme.app.id)).length];
    const web = await visit({ path: '/maya?utm_source=x', method: 'HEAD' });
    expect(web.statusCode).toBe(302);
    expect(web.headers.location).toBe('https://acme.example/shop?ref=maya&utm_source=x');
    expect(web.body).toBe('');
    const app = await visit({ path: '/app', method: 'HEAD' });
    expect(app.statusCode).toBe(200);
    expect(app.headers['content-type']).toBe('text/html; charset=utf-8');
    expect([(await clicksOf(acme.web.id)).length, (await clicksOf(acme.app.id)).length]).toEqual(before);
    // The same headers as GET's (their values differ only by the click token GET mints).
    for (const [path, head] of [['/maya?utm_source=x', web], ['/app', app]] as const) {
      const get = await visit({ path });
      expect(Object.keys(head.headers).sort(), path).toEqual(Object.keys(get.headers).sort());
    }
    expect(web.headers['content-length']).toBe('0');
  });

  it('refuses other methods with 405 HTML, before reading a body', async () => {
    for (const method of ['POST', 'PUT', 'DELETE'] as const) {
      const res = await t.request({ method, url: '/api/public/attribution/clicks', headers: { host: acme.hostname }, payload: { domain: acme.hostname } });
      expect(res.statusCode, method).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    }
  });

  it('never counts /favicon.ico, /robots.txt or /.well-known/* as clicks', async () => {
    const before = (await clicksOf(acme.root.id)).length;
    const robots = await visit({ path: '/robots.txt' });
    expect(robots.statusCode).toBe(200);
    expect(robots.body).toBe('User-agent: *\nDisallow: /\n');
    for (const path of ['/favicon.ico', '/.well-known/apple-app-site-association', '/.well-known/acme-challenge/x']) {
      const res = await visit({ path });
      expect(res.statusCode, path).toBe(404);
      expect(res.headers['content-type'], path).toBe('text/html; charset=utf-8');
    }
    expect((await clicksOf(acme.root.id)).length).toBe(before);
  });

  it('answers hostile paths with a 404 page or the right link, never 500 and never JSON', async () => {
    const cases: [string, number][] = [
      ['/%zz', 404],
      ['/%00', 404],
      ['/maya%00', 404],
      ['/%ED%A0%80', 404], // an encoded lone surrogate
      [`/${'a'.repeat(2100)}`, 302], // no such slug (as POST /clicks with that slug): the root link
      [`/${'%41'.repeat(5000)}`, 302],
      ['/../maya', 302], // the web link, or no such slug: the root link
      ['/maya/../../etc/passwd', 302],
      ['/%2e%2e%2fmaya', 302],
    ];
    const acmeLinks = [acme.root.id, acme.web.id];
    for (const [path, status] of cases) {
      const res = await visit({ path });
      expect(res.statusCode, path).toBe(status);
      if (status === 404) expect(res.headers['content-type'], path).toBe('text/html; charset=utf-8');
      if (status === 302) expect(acmeLinks, path).toContain(clickTokenLinkId(t.config.secretKey, tokenIn(res.headers.location as string)!));
    }
  });

  it('takes a request target in absolute form (as sent to a proxy) by its path, on the domain it names whatever Host says', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const head = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write(`GET http://${acme.hostname}/maya?utm_source=x HTTP/1.1\r\nHost: unknown-domain.example\r\nUser-Agent: ${IPHONE}\r\nConnection: close\r\n\r\n`),
      );
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk));
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
    });
    expect(head).toMatch(/^HTTP\/1\.1 302 /);
    const location = head.match(/^location: (.+)$/im)![1]!.trim();
    expect(location).toMatch(/^https:\/\/acme\.example\/shop\?ref=maya&utm_source=x&svc_cid=svc_/);
    expect(clickTokenLinkId(t.config.secretKey, tokenIn(location)!)).toBe(acme.web.id);
  });

  it('keeps today’s routes on every host that is not an attribution domain', async () => {
    for (const host of ['127.0.0.1:3000', 'localhost', 'svc.test', '[::1]:3000', 'unknown-domain.example']) {
      const res = await t.request({ method: 'GET', url: '/healthz', headers: { host } });
      expect(res.headers['content-type'], host).toMatch(/^application\/json/);
      for (const url of ['/maya', '/api/internal/attribution-links/%ED%A0%80', '/api/v1/%zz']) {
        const missing = await t.request({ method: 'GET', url, headers: { host } });
        expect(missing.statusCode, `${host}${url}`).toBe(404);
        expect(missing.json(), `${host}${url}`).toEqual({ error: 'not_found' });
      }
    }
  });

  it("never answers the service's own host (PUBLIC_BASE_URL) as a link visit, even with a domains row for it", async () => {
    // Registration refuses it (test/portal/domains.test.ts); a row written before that rule existed must not take the API.
    await t.services.db
      .insertInto('domains')
      .values({ id: uniqueId('own'), hostname: 'svc.test', brand_id: acme.brand.id, registered_by: 'operator', verification_token: 'x', dns: JSON.stringify([]) })
      .execute();
    t.services.linkChanges.changed();
    for (const host of ['svc.test', 'www.svc.test:3000']) {
      const api = await t.request({ method: 'GET', url: '/api/v1/brand', headers: { host } });
      expect(api.statusCode, host).toBe(401);
      expect(api.json()).toEqual({ error: 'missing_api_key' });
    }
    expect((await visit({ path: '/maya', headers: { 'user-agent': DESKTOP } })).statusCode).toBe(302);
  });

  it("never serves a brand's pending portal domain: its host keeps today's routes until a check verifies it", async () => {
    const brand = await createBrand(t, { name: 'Squatter' });
    await createPortalUser(t, brand.id, 'squat@squatter.test');
    const session = portal(t, await portalLogin(t, 'squat@squatter.test'));
    const claimed = await session.send('POST', '/domains', { hostname: 'localhost.localdomain' });
    expect(claimed.statusCode, claimed.body).toBe(201);
    await createLink(t, { brand_id: brand.id, creator_id: acme.creator.id, domain_id: claimed.json().id, slug: '', destination_url: 'https://squatter.example/' });
    const host = 'localhost.localdomain:3000';
    const health = await t.request({ method: 'GET', url: '/healthz', headers: { host } });
    expect(health.headers['content-type']).toMatch(/^application\/json/);
    const api = await t.request({ method: 'GET', url: '/api/v1/brand', headers: { host } });
    expect([api.statusCode, api.json()]).toEqual([401, { error: 'missing_api_key' }]);
    expect((await t.request({ method: 'GET', url: '/portal/', headers: { host } })).statusCode).toBe(200);
    const login = await t.request({ method: 'POST', url: '/api/client/auth/login', headers: { host }, payload: { email: 'squat@squatter.test', password: 'wrong password here' } });
    expect(login.statusCode).not.toBe(405);
    expect(login.headers['content-type']).toMatch(/^application\/json/);
    const click = await t.request({ method: 'POST', url: '/api/public/attribution/clicks', payload: { domain: 'localhost.localdomain' } });
    expect([click.statusCode, click.json()]).toEqual([404, { error: 'link_not_found' }]);

    // Verified (its check found the records): served from then on.
    await t.services.db.updateTable('domains').set({ verification_status: 'verified' }).where('id', '=', claimed.json().id).execute();
    t.services.linkChanges.changed();
    expect((await t.request({ method: 'GET', url: '/', headers: { host, 'user-agent': DESKTOP } })).statusCode).toBe(302);
    await t.services.db.deleteFrom('links').where('brand_id', '=', brand.id).execute();
    await t.services.db.deleteFrom('domains').where('id', '=', claimed.json().id).execute();
    t.services.linkChanges.changed();
  });

  it('serves a domain registered after the first visit (the host list follows the change feed)', async () => {
    const hostname = `${uniqueId('late')}.link`;
    expect((await visit({ host: hostname, path: '/' })).headers['content-type']).toMatch(/^application\/json/);
    const domain = await createDomain(t, { hostname, brand_id: acme.brand.id });
    await createLink(t, { brand_id: acme.brand.id, creator_id: acme.creator.id, domain_id: domain.id, destination_url: 'https://acme.example/late' });
    const res = await visit({ host: hostname, path: '/' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toMatch(/^https:\/\/acme\.example\/late\?svc_cid=svc_/);
  });
});

describe('bots and previews', () => {
  const PREVIEWS = ['facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)', 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)', 'Twitterbot/1.0', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'];

  it('serves bots and prefetches like people but stores their clicks with bot = 1, under tokens that never credit', async () => {
    const brand = await attributionBrand(t, 'Botco');
    const visits: Record<string, string>[] = [
      ...PREVIEWS.map((ua) => ({ 'user-agent': ua })),
      { 'user-agent': IPHONE, 'sec-purpose': 'prefetch' },
      { 'user-agent': IPHONE, purpose: 'prefetch' },
      { 'user-agent': IPHONE, 'sec-purpose': 'prefetch;prerender' },
    ];
    const tokens: string[] = [];
    for (const headers of visits) {
      const res = await visit({ host: brand.hostname, path: '/maya', headers });
      expect(res.statusCode).toBe(302);
      tokens.push(tokenIn(res.headers.location as string)!);
    }
    const appVisit = await visit({ host: brand.hostname, path: '/app', headers: { 'user-agent': 'WhatsApp/2.24.1 A' }, remoteAddress: '192.0.2.50' });
    expect(appVisit.statusCode).toBe(200);
    const appToken = pageToken(appVisit.body)!;
    expect(appToken).toMatch(/^svc_/);
    // A visit without a user agent is a person's.
    const bare = await t.request({ method: 'GET', url: '/maya', headers: { host: brand.hostname, 'user-agent': '' } });
    expect(bare.statusCode).toBe(302);

    for (const token of [...tokens, appToken]) expect(clickTokenLinkId(t.config.secretKey, token)).toBeNull();
    const rows = await clicksOf(brand.web.id);
    expect(rows.filter((r) => r.bot === 1)).toHaveLength(visits.length);
    expect(rows.filter((r) => r.bot === 0)).toHaveLength(1);
    const appRows = await clicksOf(brand.app.id);
    expect(appRows).toMatchObject([{ bot: 1, ip_hash: '' }]); // never IP-matched

    // The bot's clipboard token credits no install; its address matches nothing.
    const install = await postPublic(
      t,
      'installs',
      { pixel_key: brand.brand.pixel_key, install_id: uniqueId('bot'), platform: 'ios', clipboard_token: appToken },
      { remoteAddress: '192.0.2.50' },
    );
    expect(install.json().install).toMatchObject({ attributed: false, resolution_method: 'unattributed' });
    // Nor a purchase.
    const event = await postPublic(t, 'events', { pixel_key: brand.brand.pixel_key, transaction_id: uniqueId('tx'), click_token: tokens[0], amount: 10 });
    expect(event.statusCode).toBe(200);
    await t.settle();
    const ledger = await warehouseRows<ClickRow>(t, 'ledger', 'brand_id = {b:String}', { b: brand.brand.id });
    expect(ledger).toMatchObject([{ link_id: null, resolution_method: 'unattributed' }]);

    // Counts: people in `clicks`, bots apart, in the portal's sources of numbers.
    const links = await t.request({ method: 'GET', url: `/api/internal/attribution-links?brand_id=${brand.brand.id}`, admin: true });
    const byId = new Map(links.json().data.map((l: { id: string }) => [l.id, l]));
    expect(byId.get(String(brand.web.id))).toMatchObject({ clicks: 1, bot_clicks: visits.length });
    expect(byId.get(String(brand.app.id))).toMatchObject({ clicks: 0, bot_clicks: 1 });
    const email = `${uniqueId('owner')}@botco.example`;
    await createPortalUser(t, brand.brand.id, email);
    const session = portal(t, await portalLogin(t, email));
    const overview = (await session.get('/overview')).json();
    expect(overview).toMatchObject({ clicks: 1, bot_clicks: visits.length + 1, installs: 1 });
    expect(overview.daily.at(-1)).toMatchObject({ clicks: 1 });
    const portalLinks = new Map((await session.get('/links')).json().data.map((l: { id: string }) => [l.id, l]));
    expect(portalLinks.get(String(brand.web.id))).toMatchObject({ clicks: 1, bot_clicks: visits.length });
    expect(portalLinks.get(String(brand.app.id))).toMatchObject({ clicks: 0, bot_clicks: 1, installs: 0 });
  });

  it('POST /clicks applies the same rule to its user_agent field', async () => {
    const res = await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'maya', user_agent: PREVIEWS[0] });
    expect(res.statusCode).toBe(200);
    const token = res.json().click_token;
    expect(clickTokenLinkId(t.config.secretKey, token)).toBeNull();
    const row = (await clicksOf(acme.web.id)).find((r) => r.click_token === token);
    expect(row).toMatchObject({ bot: 1 });
  });
});
