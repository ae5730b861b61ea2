import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickTokenLinkId } from '../../../src/attribution/links/click-token';
import { createDomain, createLink, type LinkFixture } from '../../helpers/attribution-fixtures';
import { chromiumInstalled, launchChromium, screenshots, watchPage } from '../../helpers/chromium';
import { createBrand, createCreator } from '../../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { postPublic, uniqueId } from '../public/setup';

/**
 * Creator links in Debian's headless Chromium: the service listens on 127.0.0.1 and the
 * brand's domain is a `*.localhost` name (Chromium sends those to loopback and treats them as
 * secure contexts, where the Clipboard API exists). A phone user agent, since `isbot` rightly
 * calls HeadlessChrome a bot.
 */
const installed = chromiumInstalled('link host');

const IPHONE_SAFARI =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

let t: TestService;
let browser: Browser;
let shop: Server;
let shopOrigin: string;
let port: number;
const fx = {} as { hostname: string; brand: { id: string; pixel_key: string }; web: LinkFixture; app: LinkFixture };

describe.skipIf(!installed)('creator links in a browser', () => {
  beforeAll(async () => {
    t = await startTestService();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
    // The brand's own site, where a web link lands.
    shop = createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<h1>Shop</h1><p id="url">${req.url}</p>`));
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
    shopOrigin = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;

    const brand = await createBrand(t, { name: 'Acme Outdoors' });
    const creator = await createCreator(t, { name: 'Maya Lopez', first_name: 'Maya' });
    fx.hostname = `acme-${randomBytes(3).toString('hex')}.localhost`;
    const domain = await createDomain(t, { hostname: fx.hostname, brand_id: brand.id });
    const common = { brand_id: brand.id, creator_id: creator.id, domain_id: domain.id };
    fx.brand = brand;
    fx.web = await createLink(t, { ...common, slug: 'maya', destination_url: `${shopOrigin}/spring` });
    fx.app = await createLink(t, {
      ...common,
      slug: 'app',
      type: 'app',
      destination_url: `${shopOrigin}/app`,
      ios_url: 'https://apps.apple.com/app/id123456789',
      android_url: 'https://play.google.com/store/apps/details?id=com.acme.app',
    });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => shop?.close(resolve));
    await destroyTestService(t);
  });

  it('a web link lands on the destination with the UTM values and the click token', async () => {
    const context = await browser.newContext({ userAgent: IPHONE_SAFARI });
    const page = await context.newPage();
    await page.goto(`http://${fx.hostname}:${port}/maya?utm_source=tiktok&utm_campaign=spring`);
    const landed = new URL(page.url());
    expect(landed.origin).toBe(shopOrigin);
    expect(landed.pathname).toBe('/spring');
    expect(landed.searchParams.get('utm_source')).toBe('tiktok');
    expect(landed.searchParams.get('utm_campaign')).toBe('spring');
    expect(clickTokenLinkId(t.config.secretKey, landed.searchParams.get('svc_cid')!)).toBe(fx.web.id);
    await context.close();
  });

  it('an app link shows the smart page; the App Store button copies the token, which credits the install by clipboard', async () => {
    const context = await browser.newContext({ userAgent: IPHONE_SAFARI, viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    const page = await context.newPage();
    // The stores are not reachable from here: answer their pages, and note any other request that leaves the link host.
    await context.route('https://apps.apple.com/**', (route) => route.fulfill({ contentType: 'text/html', body: '<h1>App Store</h1>' }));
    const watch = watchPage(page, `http://${fx.hostname}:${port}`, 'https://apps.apple.com');

    await page.goto(`http://${fx.hostname}:${port}/app`);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Acme Outdoors');
    const token = await page.locator('main').getAttribute('data-click-token');
    expect(clickTokenLinkId(t.config.secretKey, token!)).toBe(fx.app.id);
    const stores = await page.locator('nav[aria-label="App stores"] a').allTextContents();
    expect(stores).toEqual(['Download on the App Store', 'Get it on Google Play']);
    expect(await screenshots(page, 'link-host-smart-page')).toEqual({ desktop: 0, phone: 0 });

    await page.getByRole('link', { name: 'Download on the App Store' }).click();
    await page.waitForURL('https://apps.apple.com/**');
    const copied = await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText());
    expect(copied).toBe(token);
    expect(watch.foreignRequests).toEqual([]);
    // CSP violations are console errors.
    expect(watch.errors).toEqual([]);

    // The app's first launch sends what it read from the clipboard.
    const res = await postPublic(t, 'installs', { pixel_key: fx.brand.pixel_key, install_id: uniqueId('phone'), platform: 'ios', clipboard_token: copied });
    expect(res.statusCode).toBe(201);
    expect(res.json().install).toMatchObject({ attributed: true, resolution_method: 'clipboard', confidence: 0.95, link: { id: fx.app.id } });
    await context.close();
  });

  it('copies the token with the fallback where the Clipboard API refuses', async () => {
    const context = await browser.newContext({ userAgent: IPHONE_SAFARI, viewport: { width: 390, height: 844 } });
    await context.grantPermissions(['clipboard-read']);
    const page = await context.newPage();
    await context.route('https://apps.apple.com/**', (route) => route.fulfill({ contentType: 'text/html', body: '<h1>App Store</h1>' }));
    // writeText refuses, as a browser that does not allow it would.
    await page.addInitScript(() => {
      const nav = (globalThis as unknown as { navigator: { clipboard?: { writeText: unknown } } }).navigator;
      if (nav.clipboard) nav.clipboard.writeText = () => Promise.reject(new Error('NotAllowedError'));
    });
    await page.goto(`http://${fx.hostname}:${port}/app`);
    const token = await page.locator('main').getAttribute('data-click-token');
    await page.getByRole('link', { name: 'Download on the App Store' }).click();
    await page.waitForURL('https://apps.apple.com/**');
    const copied = await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText());
    expect(copied).toBe(token);
    await context.close();
  });
});
