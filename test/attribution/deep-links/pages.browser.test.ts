import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumInstalled, launchChromium, type PageWatch, screenshots, watchPage } from '../../helpers/chromium';
import { createDomain } from '../../helpers/attribution-fixtures';
import { createBrand, createCreator } from '../../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { createPortalUser, PORTAL_PASSWORD } from '../../portal/helpers';

/** The Setup page's SDK snippets and apps form, and the Links page's deep links, in headless Chromium at 1280 and 390 px. */

const installed = chromiumInstalled('deep-link pages');
const EMAIL = 'deep@acme.test';
const FP = Array.from({ length: 32 }, () => 'ab').join(':');
let t: TestService;
let base: string;
let brandId: string;
let browser: Browser;
let page: Page;
let watch: PageWatch;

const settled = () =>
  page.waitForFunction(() => !(globalThis as unknown as { document: { querySelector(s: string): unknown } }).document.querySelector('main [aria-busy="true"], main .loading'));
const text = async (selector: string) => ((await page.locator(selector).first().textContent()) ?? '').trim();

describe.skipIf(!installed)('deep links in the portal pages', () => {
  beforeAll(async () => {
    t = await startTestService({ workers: false });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const brand = await createBrand(t, { name: 'Acme' });
    brandId = brand.id;
    const creator = await createCreator(t, { name: 'Omar Haddad', first_name: 'Omar' });
    const domain = await createDomain(t, { hostname: 'go.acme-deep.test', brand_id: brand.id });
    const owner = { brand_id: brand.id, creator_id: creator.id, domain_id: domain.id, type: 'app', destination_url: 'https://acme.example/app', ios_url: 'https://apps.apple.com/app/id1' };
    for (const [slug, deep_link] of [
      ['omar-app', 'acme://recipes/summer-salad-with-grilled-halloumi-and-mint?tab=steps&servings=4'],
      ['omar-web', null],
    ] as const) {
      const res = await t.request({ method: 'POST', url: '/api/internal/attribution-links', admin: true, payload: { ...owner, slug, deep_link } });
      expect(res.statusCode, res.body).toBe(201);
    }
    await createPortalUser(t, brand.id, EMAIL);
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' })).newPage();
    watch = watchPage(page, base);
    await page.goto(`${base}/portal/`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PORTAL_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    if (t) await destroyTestService(t);
  });

  it('Links shows a link’s deep link under its address', async () => {
    await page.goto(`${base}/portal/links`);
    await settled();
    const cell = page.locator('tbody tr', { hasText: 'omar-app' }).locator('td[data-label="Link"]');
    expect(await cell.locator('.deep-link-line').textContent()).toBe('App opens acme://recipes/summer-salad-with-grilled-halloumi-and-mint?tab=steps&servings=4');
    expect(await page.locator('tbody tr', { hasText: 'omar-web' }).locator('.deep-link-line').count()).toBe(0);
    expect(await screenshots(page, 'deep-links-links', { fullPage: true })).toEqual({ desktop: 0, phone: 0 });
  });

  it('Setup shows the React Native and Swift snippets and saves the apps', async () => {
    await page.goto(`${base}/portal/setup`);
    await settled();
    expect(await text('pre[aria-label="Swift configuration"]')).toContain('Svc.configure(');
    expect(await text('pre[aria-label="React Native configuration"]')).toContain('configure({');
    await page.getByLabel('Team ID').fill('ABCDE12345');
    await page.getByLabel('Bundle ID').fill('com.acme.app');
    await page.getByLabel('Package name').fill('com.acme.app');
    await page.getByLabel('SHA-256 certificate fingerprints').fill(FP);
    await page.getByRole('button', { name: 'Save apps' }).click();
    await expect.poll(() => text('form.apps [aria-live]')).toBe('Saved: iOS and Android.');
    const stored = await t.request({ method: 'GET', url: '/.well-known/assetlinks.json', headers: { host: 'go.acme-deep.test' } });
    expect(stored.json()[0].target.sha256_cert_fingerprints).toEqual([FP.toUpperCase()]);
    expect(await page.getByLabel('SHA-256 certificate fingerprints').inputValue()).toBe(FP.toUpperCase());

    // A refused value is said in words, and nothing changes.
    await page.getByLabel('Team ID').fill('abc');
    await page.getByRole('button', { name: 'Save apps' }).click();
    await expect.poll(() => text('form.apps .form-error')).not.toBe('');
    const apps = await t.services.db.selectFrom('brand_apps').selectAll().where('brand_id', '=', brandId).executeTakeFirstOrThrow();
    expect(apps.ios_team_id).toBe('ABCDE12345');
    await page.getByLabel('Team ID').fill('ABCDE12345');
    expect(await screenshots(page, 'deep-links-setup', { fullPage: true })).toEqual({ desktop: 0, phone: 0 });
    expect(watch.errors).toEqual([]);
    expect(watch.foreignRequests).toEqual([]);
  });
});
