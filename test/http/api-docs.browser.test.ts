import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumInstalled, launchChromium, type PageWatch, screenshots, startListeningService, watchPage } from '../helpers/chromium';
import { createApiKey, createBrand } from '../helpers/fixtures';
import { destroyTestService, type TestService } from '../helpers/harness';

/**
 * GET /docs/api in Debian's headless Chromium, against the service listening on a real port
 * (PUBLIC_BASE_URL names it, so "Try it out" calls this origin): the Data API's operations are
 * drawn, one is called with an API key, the switch shows the portal's document, and nothing is
 * requested from another origin, refused by the CSP or thrown. Screenshots go to test/artifacts/.
 */
const installed = chromiumInstalled('API reference');

let t: TestService;
let base: string;
let apiKey: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let watch: PageWatch;
const shoot = (name: string) => screenshots(page, `api-docs-${name}`);

/** The paths of the operations Swagger UI has drawn, as shown. */
const shownPaths = () => page.locator('.opblock-summary-path').allTextContents();

describe.skipIf(!installed)('API reference in headless Chromium', () => {
  beforeAll(async () => {
    ({ t, base } = await startListeningService());
    const brand = await createBrand(t, { name: 'Acme' });
    apiKey = (await createApiKey(t, brand.id)).key;

    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    watch = watchPage(page, base);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (t) await destroyTestService(t);
  });

  it('draws the Data API operations and calls one with an API key', { timeout: 60_000 }, async () => {
    await page.goto(`${base}/docs/api`);
    await page.locator('.opblock-summary-path', { hasText: '/metrics/summary' }).first().waitFor();
    const paths = await shownPaths();
    for (const p of ['/brand', '/metrics/summary', '/metrics/daily', '/posts', '/creators', '/posts.csv', '/openapi.json']) expect(paths).toContain(p);
    await expect(page.locator('.info .title').textContent()).resolves.toMatch(/Data API/i);
    await shoot('data-api');

    // Authorize with the key, open GET /metrics/summary, "Try it out", Execute: a 200 from this origin.
    await page.getByRole('button', { name: /Authorize/ }).first().click();
    const dialog = page.locator('.modal-ux');
    await dialog.locator('input[type="text"], input[type="password"]').first().fill(apiKey);
    await dialog.getByRole('button', { name: 'Apply credentials' }).first().click();
    await dialog.getByRole('button', { name: 'Close' }).first().click();
    const op = page.locator('.opblock', { has: page.locator('.opblock-summary-path', { hasText: /^\/metrics\/summary$/ }) });
    await op.locator('.opblock-summary').click();
    await op.getByRole('button', { name: 'Try it out' }).click();
    await op.getByRole('button', { name: 'Execute' }).click();
    const status = op.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor();
    expect((await status.textContent())?.trim()).toBe('200');
    await expect(op.locator('.request-url').textContent()).resolves.toContain(`${base}/api/v1/metrics/summary`);
    await shoot('data-api-try');
  });

  it('switches to the portal document', async () => {
    await page.locator('.topbar select').selectOption({ label: 'Portal API' });
    await page.locator('.opblock-summary-path', { hasText: '/api/client/attribution/overview' }).first().waitFor();
    const paths = await shownPaths();
    for (const p of ['/api/client/auth/login', '/api/client/attribution/overview', '/api/client/attribution/events', '/api/client/attribution/domains']) {
      expect(paths).toContain(p);
    }
    expect(paths).not.toContain('/metrics/summary');
    await shoot('portal');

    // ?doc=portal opens on the portal's document.
    await page.goto(`${base}/docs/api?doc=portal`);
    await page.locator('.opblock-summary-path', { hasText: '/api/client/attribution/overview' }).first().waitFor();
  });

  it('shows realistic examples: counts and dates a person could have, not the bounds of an integer', async () => {
    await page.goto(`${base}/docs/api`);
    const op = page.locator('.opblock', { has: page.locator('.opblock-summary-path', { hasText: /^\/metrics\/daily$/ }) });
    await op.locator('.opblock-summary').click();
    const example = op.locator('.responses-wrapper .example').first();
    await example.waitFor();
    const shown = (await example.textContent()) ?? '';
    expect(shown).toContain('"date": "2026-03-02"');
    expect(shown).toContain('"views": 48210');
    expect(shown).not.toMatch(/9007199254740991|"string"|\b9\d{3}-\d\d-\d\d/);
    await shoot('data-api-examples');
  });

  it('switches to the attribution API document, whose examples carry a pixel key', async () => {
    await page.goto(`${base}/docs/api?doc=attribution`);
    await page.locator('.opblock-summary-path', { hasText: '/events' }).first().waitFor();
    await expect(page.locator('.info .title').textContent()).resolves.toMatch(/attribution API/i);
    const paths = await shownPaths();
    for (const p of ['/clicks', '/installs', '/events', '/openapi.json']) expect(paths).toContain(p);
    const op = page.locator('.opblock', { has: page.locator('.opblock-summary-path', { hasText: /^\/events$/ }) });
    await op.locator('.opblock-summary').click();
    const body = ((await op.locator('.body-param__example, .opblock-section-request-body .example').first().textContent()) ?? '').trim();
    expect(body).toContain('"pixel_key": "pk_live_');
    expect(body).toContain('"amount": 49.99');
    for (const status of ['429', '503']) await op.locator(`.response[data-code="${status}"]`).waitFor();
    await shoot('attribution-api');
  });

  it('requested nothing from another origin, got no error answer, broke no CSP rule and threw nothing', () => {
    expect(watch.foreignRequests).toEqual([]);
    expect(watch.failedResponses).toEqual([]);
    // CSP violations are console errors.
    expect(watch.errors).toEqual([]);
  });
});
