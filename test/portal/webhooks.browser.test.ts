import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDns, startReceiver, TEST_ENV } from '../attribution/outbound-webhooks/helpers';
import { chromiumInstalled, launchChromium, type PageWatch, screenshots, watchPage } from '../helpers/chromium';
import { createBrand } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { createPortalUser, PORTAL_PASSWORD } from './helpers';

/**
 * The portal's Webhooks page in headless Chromium: add an endpoint (its secret shown once, with a
 * copy button and a verification line), send a test event and read its attempt in the delivery
 * log, replay it, rotate the secret, and the banner of a failing endpoint; at 390 and 1280 px.
 */
const installed = chromiumInstalled('portal webhooks');

let t: TestService;
let dns: Awaited<ReturnType<typeof startDns>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let base: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let watch: PageWatch;
let brandId: string;

type PageGlobals = { document: { querySelector(selector: string): unknown }; navigator: { clipboard: { readText(): Promise<string> } } };
const settled = () => page.waitForFunction(() => !(globalThis as unknown as PageGlobals).document.querySelector('main [aria-busy="true"], main .loading'));
const clipboard = () => page.evaluate(() => (globalThis as unknown as PageGlobals).navigator.clipboard.readText());

async function shoot(name: string) {
  expect(await screenshots(page, `portal-webhooks-${name}`, { fullPage: true }), name).toEqual({ desktop: 0, phone: 0 });
}

describe.skipIf(!installed)('the Webhooks page in headless Chromium', () => {
  beforeAll(async () => {
    dns = await startDns();
    receiver = await startReceiver();
    t = await startTestService({ env: TEST_ENV(dns.server) });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    brandId = (await createBrand(t, { name: 'Acme' })).id;
    await createPortalUser(t, brandId, 'owner@acme.test');
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    page = await context.newPage();
    watch = watchPage(page, base);
    await page.goto(`${base}/portal/webhooks`);
    await page.getByLabel('Email').fill('owner@acme.test');
    await page.getByLabel('Password').fill(PORTAL_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await settled();
  });
  afterAll(async () => {
    await browser?.close();
    if (t) await destroyTestService(t);
    await receiver?.close();
    await dns?.close();
  });

  it('lists no endpoint at first, in the navigation', async () => {
    expect(await page.getByRole('navigation', { name: 'Portal pages' }).getByRole('link', { name: 'Webhooks' }).getAttribute('aria-current')).toBe('page');
    await page.getByText('No endpoint yet.').waitFor();
    await shoot('empty');
  });

  it('says why a URL is refused', async () => {
    await page.getByLabel('URL').fill('https://localhost/hook');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await expect.poll(() => page.locator('.add-webhook .form-error').textContent()).toBe('The URL may not point at localhost.');
  });

  it('adds an endpoint and shows its secret once, with a copy button and a verification line', async () => {
    await page.getByLabel('URL').fill(receiver.url('/portal-hook'));
    await page.getByLabel('Description (optional)').fill('Our CRM');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('heading', { name: 'Your signing secret' }).waitFor();
    const secret = ((await page.locator('code.secret').textContent()) ?? '').trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await page.getByRole('button', { name: 'Copy signing secret' }).click();
    expect(await clipboard()).toBe(secret);
    expect(await page.locator('.secret-once pre').textContent()).toContain("require('standardwebhooks')");
    await settled();
    const card = page.locator('li.webhook');
    await expect.poll(() => card.locator('h3').textContent()).toBe(receiver.url('/portal-hook'));
    expect(await card.textContent()).toContain(`${secret.slice(0, 10)}…`);
    expect(await card.locator('.badge').first().textContent()).toBe('Active');
    await shoot('created');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.locator('code.secret').count()).toBe(0);
  });

  it('sends a test event and shows its attempt (status, time, excerpt) in the delivery log, and replays it', async () => {
    const card = page.locator('li.webhook');
    await card.getByRole('button', { name: 'Send test event' }).click();
    await card.locator('table.deliveries').waitFor();
    // The log reads itself again while the delivery is on its way.
    await expect.poll(() => card.locator('table.deliveries tbody tr:not(.attempts) td[data-label="Status"]').first().textContent(), { timeout: 15_000 }).toBe('Succeeded');
    expect(await card.getByRole('button', { name: 'Delivery log' }).getAttribute('aria-expanded')).toBe('true');
    expect(receiver.received.filter((r) => r.path === '/portal-hook')).toHaveLength(1);
    await card.getByRole('button', { name: 'Attempts' }).click();
    const attempts = card.locator('.attempt-list li');
    await attempts.first().waitFor();
    expect(await attempts.first().textContent()).toMatch(/UTC · \d+ ms · HTTP 200/);
    expect(await attempts.first().locator('pre.excerpt').textContent()).toBe('ok');
    await shoot('log');
    await card.getByRole('button', { name: 'Replay' }).click();
    await expect.poll(() => receiver.received.filter((r) => r.path === '/portal-hook').length).toBe(2);
  });

  it('rotates the secret and shows the new one once', async () => {
    const card = page.locator('li.webhook');
    await card.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('heading', { name: 'Your new signing secret' }).waitFor();
    expect(await page.locator('.secret-once').textContent()).toContain('The old secret signs too until');
    await settled();
    expect(await page.locator('li.webhook').textContent()).toContain('the previous one signs too until');
    await page.getByRole('button', { name: 'I have stored it' }).click();
  });

  it('shows a banner while an endpoint fails', async () => {
    await sql`UPDATE webhook_endpoints SET failing_since = now() - interval '2 hours' WHERE brand_id = ${brandId}`.execute(t.services.db);
    await page.reload();
    await settled();
    const banner = page.locator('.webhook-alert');
    await banner.waitFor();
    expect(await banner.textContent()).toContain(receiver.url('/portal-hook'));
    expect(await banner.textContent()).toContain('failing since');
    expect(await page.locator('li.webhook .badge').first().textContent()).toMatch(/^Failing since /);
    await shoot('failing');
    expect(watch.errors).toEqual([]);
    expect(watch.foreignRequests).toEqual([]);
    // Before logging in, and the refused URL: nothing else was refused.
    expect(watch.failedResponses).toEqual(['401 GET /api/client/auth/me', '422 POST /api/client/attribution/webhooks']);
  });
});
