import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDomain, createLink } from '../helpers/attribution-fixtures';
import { chromiumInstalled, launchChromium, type PageWatch, watchPage } from '../helpers/chromium';
import { createBrand, createCreator } from '../helpers/fixtures';
import { freePort } from '../helpers/free-port';
import { destroyTestService, eventually, startTestService, type TestService } from '../helpers/harness';
import { createPortalUser, portal, portalLogin } from '../portal/helpers';

/**
 * The web pixel end to end, in Debian's headless Chromium: the service listens on
 * 127.0.0.1, a brand's landing page on another port (another origin, so CORS is exercised)
 * holds the snippet of GET /setup verbatim, and a purchase tracked in the page must reach
 * the ledger credited to the link whose click minted the page's svc_cid.
 */
const installed = chromiumInstalled('pixel');

let t: TestService;
let browser: Browser;
let landing: Server;
let landingOrigin: string;
let snippet: string;
let cookie: string;
const fx = {} as { hostname: string; link: { id: number }; creator: { id: string; name: string } };

/** The brand's site: /landing holds the snippet; /queued also tracks a purchase before the pixel has loaded. */
function landingPage(path: string): string {
  const queued =
    path === '/queued'
      ? snippet.replace('</script>', "  svc('track', 'purchase', { transaction_id: 'queued-1', amount: 5, currency: 'EUR' });\n</script>")
      : snippet;
  return `<!doctype html><html><head><meta charset="utf-8"><title>Shop</title>\n${queued}\n</head><body><h1>Shop</h1></body></html>`;
}

async function clickToken(): Promise<string> {
  const res = await t.request({ method: 'POST', url: '/api/public/attribution/clicks', payload: { domain: fx.hostname, slug: 'anna' } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().click_token;
}

type FeedItem = { transaction_id: string; amount: number; currency: string; source: string; link: { id: number } | null; creator: unknown; resolution_method: string };

/** The ledger row of `transactionId` as the portal feed shows it, once the workers wrote it. */
async function feedItem(transactionId: string): Promise<FeedItem> {
  const p = portal(t, cookie);
  const item = await eventually(
    async () => ((await p.get('/events?period=7d&limit=100')).json().data as FeedItem[]).find((e) => e.transaction_id === transactionId),
    (found) => found !== undefined,
  );
  return item!;
}

async function ledgerCount(transactionId: string): Promise<number> {
  const rows = await t.services.db.selectFrom('ledger_events').select('id').where('transaction_id', '=', transactionId).execute();
  return rows.length;
}

/** The page's globals, as the functions evaluated in the page see them (no DOM types here). */
type PageGlobals = {
  svc?: ((...args: unknown[]) => unknown) & { loaded?: boolean };
  localStorage: { getItem(key: string): string | null };
};

const waitForPixel = (page: Page) => page.waitForFunction(() => (globalThis as unknown as PageGlobals).svc?.loaded === true);
const pendingCount = (page: Page) =>
  page.evaluate(() => JSON.parse((globalThis as unknown as PageGlobals).localStorage.getItem('svc_pending') ?? '[]').length as number);
const waitUntilSent = (page: Page) =>
  page.waitForFunction(() => JSON.parse((globalThis as unknown as PageGlobals).localStorage.getItem('svc_pending') ?? '[]').length === 0, undefined, {
    timeout: 15_000,
  });
/** Calls svc(...args) in the page and answers what it returned. */
const svcCall = (page: Page, ...args: unknown[]) => page.evaluate((a) => (globalThis as unknown as PageGlobals).svc!(...a), args);

async function openLanding(page: Page, path: string, token: string) {
  await page.goto(`${landingOrigin}${path}?svc_cid=${encodeURIComponent(token)}&utm_source=test`);
  await waitForPixel(page);
}

describe.skipIf(!installed)('web pixel in headless Chromium', () => {
  let context: BrowserContext;
  let page: Page;
  let watch: PageWatch;

  beforeAll(async () => {
    const port = await freePort();
    t = await startTestService({ env: { PUBLIC_BASE_URL: `http://127.0.0.1:${port}` } });
    await t.app.listen({ port, host: '127.0.0.1' });

    const brand = await createBrand(t, { name: 'Acme' });
    fx.creator = await createCreator(t, { name: 'Anna Berg', first_name: 'Anna' });
    fx.hostname = `go-${randomBytes(3).toString('hex')}.test`;
    const domain = await createDomain(t, { hostname: fx.hostname });
    fx.link = await createLink(t, { brand_id: brand.id, creator_id: fx.creator.id, domain_id: domain.id, slug: 'anna' });
    await createPortalUser(t, brand.id, 'a@acme.test');
    cookie = await portalLogin(t, 'a@acme.test');
    snippet = (await portal(t, cookie).get('/setup')).json().snippet;

    landing = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(landingPage(new URL(req.url ?? '/', 'http://x').pathname));
    });
    await new Promise<void>((resolve) => landing.listen(0, '127.0.0.1', resolve));
    landingOrigin = `http://127.0.0.1:${(landing.address() as AddressInfo).port}`;

    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => landing?.close(resolve));
    if (t) await destroyTestService(t);
  });

  beforeEach(async () => {
    context = await browser.newContext();
    page = await context.newPage();
    watch = watchPage(page, landingOrigin, t.config.publicBaseUrl);
  });
  afterEach(async () => {
    expect(watch.errors).toEqual([]);
    expect(watch.foreignRequests).toEqual([]);
    await context.close();
  });

  it('keeps svc_cid from the landing URL and credits a purchase to the link that minted it', async () => {
    const token = await clickToken();
    await openLanding(page, '/landing', token);
    const stored = await context.cookies(landingOrigin);
    expect(stored.find((c) => c.name === 'svc_cid')).toMatchObject({ value: token, path: '/', sameSite: 'Lax' });
    expect(await page.evaluate(() => JSON.parse((globalThis as unknown as PageGlobals).localStorage.getItem('svc_cid') ?? '{}').token)).toBe(token);

    // A later page of the same site, without svc_cid in its URL, still sends the token.
    await page.goto(`${landingOrigin}/checkout`);
    await waitForPixel(page);
    await svcCall(page, 'track', 'purchase', { transaction_id: 'web-1', amount: 49.99, currency: 'USD' });
    await waitUntilSent(page);

    expect(await feedItem('web-1')).toMatchObject({
      amount: 49.99,
      currency: 'USD',
      source: 'pixel',
      link: { id: fx.link.id, domain: fx.hostname, slug: 'anna' },
      creator: { id: fx.creator.id, name: 'Anna Berg' },
      resolution_method: 'click',
    });
  });

  it('runs calls made before the pixel loaded', async () => {
    await openLanding(page, '/queued', await clickToken());
    expect(await feedItem('queued-1')).toMatchObject({ amount: 5, currency: 'EUR', link: { id: fx.link.id } });
  });

  it('retries after a failed request, and records the purchase once', async () => {
    let failed = 0;
    await context.route('**/api/public/attribution/events', (route) => {
      if (route.request().method() === 'POST' && failed === 0) {
        failed++;
        return route.abort('connectionreset');
      }
      return route.continue();
    });
    await openLanding(page, '/landing', await clickToken());
    await svcCall(page, 'track', 'purchase', { transaction_id: 'web-retry', amount: 12, currency: 'GBP' });
    await svcCall(page, 'track', 'purchase', { transaction_id: 'web-retry', amount: 12, currency: 'GBP' }); // the same purchase again
    await waitUntilSent(page);
    expect(failed).toBe(1);
    expect(await feedItem('web-retry')).toMatchObject({ amount: 12, currency: 'GBP', link: { id: fx.link.id } });
    expect(await ledgerCount('web-retry')).toBe(1);
  });

  it('keeps unsent events in localStorage and sends them from the next page view', async () => {
    await context.route('**/api/public/attribution/events', (route) => route.abort('internetdisconnected'));
    await openLanding(page, '/landing', await clickToken());
    await svcCall(page, 'track', 'renewal', { transaction_id: 'web-offline', amount: '7.50', currency: 'usd' });
    await eventually(() => pendingCount(page), (n) => n === 1);
    await context.unroute('**/api/public/attribution/events');
    await page.goto(`${landingOrigin}/next`);
    await waitUntilSent(page);
    expect(await feedItem('web-offline')).toMatchObject({ amount: 7.5, currency: 'USD', link: { id: fx.link.id } });
    expect(await ledgerCount('web-offline')).toBe(1);
  });

  it('never throws into the page, whatever it is given', async () => {
    await openLanding(page, '/landing', await clickToken());
    const answers = await page.evaluate(() => {
      const svc = (globalThis as unknown as PageGlobals).svc!;
      const hostile = {
        get transaction_id(): string {
          throw new Error('getter exploded');
        },
      };
      return [
        svc(),
        svc(null),
        svc('nope'),
        svc('init'),
        svc('init', 42),
        svc('track'),
        svc('track', 'bogus-type', {}),
        svc('track', 'purchase', 'not an object'),
        svc('track', 'purchase', { amount: 'abc', currency: { toString: null }, code: ['x'] }),
        svc('track', 'purchase', hostile),
        svc('track', 'purchase', null),
      ].map((v) => v === undefined);
    });
    expect(answers.every(Boolean)).toBe(true);
    // The purchases it could make sense of still go out, with generated transaction ids.
    await waitUntilSent(page);
  });
});
