import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDomain, createLink } from '../helpers/attribution-fixtures';
import { chromiumInstalled, launchChromium, type PageWatch, screenshots, startListeningService, watchPage } from '../helpers/chromium';
import { createBrand, createCreator } from '../helpers/fixtures';
import { destroyTestService, type TestService } from '../helpers/harness';
import { createPortalUser, PORTAL_PASSWORD, portal, portalLogin } from './helpers';

/**
 * The Domains page in headless Chromium, with PUBLIC_BASE_URL on a loopback address as `npm start`
 * leaves it: each kind of domain says its state in words, and the page says what to set.
 */
const installed = chromiumInstalled('domains page');
const EMAIL = 'owner@domains.test';

let t: TestService;
let base: string;
let browser: Browser;
let page: Page;
let watch: PageWatch;
const ids = {} as Record<'operator' | 'pending' | 'missing' | 'taken', string>;

describe.skipIf(!installed)('portal Domains page', () => {
  beforeAll(async () => {
    ({ t, base } = await startListeningService());

    const brand = await createBrand(t, { name: 'Acme' });
    const rival = await createBrand(t, { name: 'Rival' });
    const creator = await createCreator(t, { name: 'Anna Berg' });
    // As the demo's: an operator domain under localhost, with a link on it.
    const operator = await createDomain(t, { hostname: `go-${randomBytes(4).toString('hex')}.localhost`, brand_id: brand.id });
    await createLink(t, { brand_id: brand.id, creator_id: creator.id, domain_id: operator.id, slug: 'anna' });
    ids.operator = operator.id;

    await createPortalUser(t, brand.id, EMAIL);
    await createPortalUser(t, rival.id, 'owner@rival.test');
    const acme = portal(t, await portalLogin(t, EMAIL));
    const other = portal(t, await portalLogin(t, 'owner@rival.test'));
    const claim = async (p: typeof acme, hostname: string) => ((await p.send('POST', '/domains', { hostname })).json() as { id: string }).id;
    ids.pending = await claim(acme, 'go.acme-shop.test');
    ids.missing = await claim(acme, 'links.acme-shop.test');
    ids.taken = await claim(acme, 'acme.contested.test');
    const rivals = await claim(other, 'acme.contested.test');
    // What checks would have found (their DNS look-ups are tested in test/portal/domains.test.ts).
    const db = t.services.db;
    await db.updateTable('domains').set({ verification_status: 'verified', verification_checked_at: new Date(), records_missing_since: new Date('2026-03-02T10:00:00Z') }).where('id', '=', ids.missing).execute();
    await db.updateTable('domains').set({ verification_status: 'verified' }).where('id', '=', rivals).execute();

    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
    page = await context.newPage();
    watch = watchPage(page, base);
    const login = await context.request.post(`${base}/api/client/auth/login`, { data: { email: EMAIL, password: PORTAL_PASSWORD }, headers: { origin: base } });
    expect(login.status()).toBe(200);
    await page.goto(`${base}/portal/domains`);
    await page.locator(`li.domain[data-domain="${ids.taken}"]`).waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    if (t) await destroyTestService(t);
  });

  const card = async (id: string) => {
    const item = page.locator(`li.domain[data-domain="${id}"]`);
    return { text: ((await item.textContent()) ?? '').replace(/\s+/g, ' '), buttons: await item.getByRole('button').allTextContents() };
  };

  it("shows the operator's domain as served, never as waiting for DNS", async () => {
    const { text, buttons } = await card(ids.operator);
    expect(text).toContain('Served');
    expect(text).toContain('Set up by svc');
    expect(text).toContain('links on it open now');
    expect(text).toContain('A name under localhost');
    for (const wrong of ['Waiting for DNS', 'Certificate', 'Not checked yet', 'Pending']) expect(text).not.toContain(wrong);
    expect(buttons).toEqual(['Remove']);
  });

  it('says what each claim needs: records to create, records missing since a date, taken by another claim', async () => {
    const pending = await card(ids.pending);
    expect(pending.text).toContain('Pending: links on it do not open yet');
    expect(pending.text).toContain('Create these DNS records at your DNS host');
    expect(pending.text).toContain('Not checked yet.');
    expect(pending.buttons).toEqual(['Copy', 'Copy', 'Check now', 'Remove']);

    const missing = await card(ids.missing);
    expect(missing.text).toContain('Records missing');
    expect(missing.text).toContain('its links still open, but its DNS records have been missing since Mar 2, 2026');
    expect(missing.text).toContain('DNS records to put back');

    const taken = await card(ids.taken);
    expect(taken.text).toContain('Taken by another claim');
    expect(taken.text).toContain('its DNS records were found first');
    expect(taken.buttons).toEqual(['Remove']);
  });

  it('says what to set when PUBLIC_BASE_URL is a loopback address (the records ask for A 127.0.0.1)', async () => {
    const pendingRecords = await page.locator(`li.domain[data-domain="${ids.pending}"] table.dns`).textContent();
    expect(pendingRecords).toContain('127.0.0.1');
    const note = ((await page.locator('#loopback-note').textContent()) ?? '').replace(/\s+/g, ' ');
    expect(note).toContain("This service's address (PUBLIC_BASE_URL) is on 127.0.0.1, a loopback address");
    expect(note).toContain('sets PUBLIC_BASE_URL to the public address');
  });

  it('fits 390 and 1280 px: no sideways scroll, no value cut off, no page error', async () => {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      const clipped = await page.evaluate(() => {
        type El = { tagName: string; className: string; scrollWidth: number; clientWidth: number };
        const g = globalThis as unknown as { document: { querySelectorAll(s: string): El[] }; getComputedStyle(e: El): { overflowX: string } };
        return [...g.document.querySelectorAll('main *')]
          .filter((el) => el.clientWidth > 1 && g.getComputedStyle(el).overflowX !== 'visible' && el.scrollWidth > el.clientWidth + 1)
          .map((el) => `${el.tagName} ${el.className}`);
      });
      expect(clipped, String(width)).toEqual([]);
    }
    expect(await screenshots(page, 'portal-domains-states', { fullPage: true })).toEqual({ desktop: 0, phone: 0 });
    expect(watch.errors).toEqual([]);
    expect(watch.foreignRequests).toEqual([]);
  });
});
