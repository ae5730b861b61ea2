import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../src/http/query';
import { createCode, createDomain, createLink, insertPastClicks, insertSandboxPurchase, type LinkFixture } from '../helpers/attribution-fixtures';
import { chromiumInstalled, launchChromium, type PageWatch, screenshots, watchPage } from '../helpers/chromium';
import { createBrand, createCreator } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { createPortalUser, PORTAL_PASSWORD, portal } from './helpers';

/**
 * The brand portal's pages in Debian's headless Chromium, against the service listening on a
 * real port: a brand user logs in through the form (the session cookie is the one the login
 * answer sets), reads every page, compares what it shows with the portal API's answers,
 * and makes the writes a brand makes. Screenshots of every page at phone and desktop widths
 * go to test/artifacts/ (git-ignored).
 *
 * Facts of brand Acme (range 30d = today-29 .. today; previous = today-59 .. today-30):
 *   link anna: 5 clicks today, 3 clicks 3 days ago, 4 clicks 40 days ago; link anna-app: 1 click today;
 *   link bob: 2 clicks today; one install credited by clipboard token;
 *   30 purchases today (USD, credited by click token), one in EUR by code ANNA, one refund (of order-01);
 *   one sandbox purchase (stored apart, never counted).
 */
const installed = chromiumInstalled('portal');

const EMAIL = 'owner@acme.test';
const EMPTY_EMAIL = 'owner@newco.test';
const today = todayUtc();
const PURCHASES = 30;

let t: TestService;
let base: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let watch: PageWatch;
const writeOrigins: Promise<string>[] = [];
const fx = {} as { hostname: string; anna: LinkFixture; annaTt: LinkFixture; bob: LinkFixture; creatorBob: { id: string } };

const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
const eur = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'EUR' });
const int = new Intl.NumberFormat('en-US');

async function post(endpoint: 'clicks' | 'installs' | 'events', payload: Record<string, unknown>) {
  const res = await t.request({ method: 'POST', url: `/api/public/attribution/${endpoint}`, payload });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json();
}

async function pastClicks(link: LinkFixture, brandId: string, creatorId: string, daysAgo: number, count: number) {
  const at = new Date(Date.parse(`${addDays(today, -daysAgo)}T12:00:00Z`));
  await insertPastClicks(t, { brandId, linkId: link.id, creatorId, domain: fx.hostname }, at, count);
}

/** The portal API as the logged-in browser sees it: the cookie the login form got. */
async function apiAsBrowser(path: string) {
  const cookie = (await context.cookies(`${base}/api/client/`)).find((c) => c.name === 'svc_session');
  expect(cookie).toBeDefined();
  const res = await portal(t, `svc_session=${cookie!.value}`).get(path);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** The page's globals, as the functions evaluated in the page see them (no DOM types here); those functions run in the page, so they name nothing from this file. */
type PageGlobals = {
  document: { querySelector(selector: string): unknown; activeElement: { id: string } | null };
  navigator: { clipboard: { readText(): Promise<string> } };
};

/** Waits until the page has drawn its data: no loading state left. */
const settled = (p: Page = page) => p.waitForFunction(() => !(globalThis as unknown as PageGlobals).document.querySelector('main [aria-busy="true"], main .loading'));
const clipboard = () => page.evaluate(() => (globalThis as unknown as PageGlobals).navigator.clipboard.readText());

async function open(path: string) {
  await page.goto(`${base}${path}`);
  await settled();
}

const text = async (selector: string) => ((await page.locator(selector).textContent()) ?? '').trim();

/**
 * The elements whose content is cut off or scrolled sideways inside them (a table wider than its
 * box, a button's label clipped), at the page's width: the whole page's width misses those.
 * Code blocks (`pre`) scroll in their own box by design; visually hidden text is clipped on purpose.
 */
const clippedInside = (p: Page = page) =>
  p.evaluate(() => {
    type El = { tagName: string; className: string; textContent: string | null; scrollWidth: number; clientWidth: number; closest(s: string): unknown };
    const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): El[] } }).document;
    const style = (globalThis as unknown as { getComputedStyle(e: El): { overflowX: string } }).getComputedStyle;
    return [...doc.querySelectorAll('body *')]
      .filter((el) => !el.closest('pre, .visually-hidden') && el.clientWidth > 1)
      .filter((el) => style(el).overflowX !== 'visible' && el.scrollWidth > el.clientWidth + 1)
      .map((el) => `${el.tagName.toLowerCase()}.${el.className} ${el.scrollWidth} in ${el.clientWidth}: ${(el.textContent ?? '').trim().slice(0, 60)}`);
  });

/** Screenshots at desktop and phone width; nothing is cut off or needs a sideways scroll of the whole page (wide code scrolls in its own box), nor inside any element at 1280 px. */
async function shoot(name: string) {
  expect(await clippedInside(), name).toEqual([]);
  expect(await screenshots(page, `portal-${name}`, { fullPage: true }), name).toEqual({ desktop: 0, phone: 0 });
}

describe.skipIf(!installed)('brand portal in headless Chromium', () => {
  beforeAll(async () => {
    t = await startTestService();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;

    const brand = await createBrand(t, { name: 'Acme' });
    const anna = await createCreator(t, { name: 'Anna Berg', first_name: 'Anna' });
    const bob = await createCreator(t, { name: 'Bob Stone', first_name: 'Bob' });
    fx.creatorBob = bob;
    // As long as the demo's (`go-<8 hex>.localhost`): the links table must fit it at 1280 px.
    fx.hostname = `go-${randomBytes(4).toString('hex')}.localhost`;
    const domain = await createDomain(t, { hostname: fx.hostname });
    const on = { brand_id: brand.id, domain_id: domain.id };
    fx.anna = await createLink(t, { ...on, creator_id: anna.id, slug: 'anna' });
    fx.annaTt = await createLink(t, { ...on, creator_id: anna.id, slug: 'anna-app' });
    fx.bob = await createLink(t, { ...on, creator_id: bob.id, slug: 'bob' });
    await createCode(t, { brand_id: brand.id, creator_id: anna.id, label: 'ANNA' });
    await createPortalUser(t, brand.id, EMAIL);
    const empty = await createBrand(t, { name: 'Newco' });
    await createPortalUser(t, empty.id, EMPTY_EMAIL);

    const tokens: string[] = [];
    for (let i = 0; i < 5; i++) tokens.push((await post('clicks', { domain: fx.hostname, slug: 'anna' })).click_token);
    await post('clicks', { domain: fx.hostname, slug: 'anna-app' });
    for (let i = 0; i < 2; i++) await post('clicks', { domain: fx.hostname, slug: 'bob' });
    await pastClicks(fx.anna, brand.id, anna.id, 3, 3);
    await pastClicks(fx.anna, brand.id, anna.id, 40, 4);

    const pk = brand.pixel_key;
    await post('installs', { pixel_key: pk, install_id: 'device-1', platform: 'ios', clipboard_token: tokens[0] });
    const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
    for (let i = 0; i < PURCHASES; i++) {
      await post('events', {
        pixel_key: pk,
        event_type: 'purchase',
        transaction_id: `order-${String(i + 1).padStart(2, '0')}`,
        amount: 10 + i,
        currency: 'USD',
        click_token: tokens[i % tokens.length],
        occurred_at: minutesAgo(60 - i),
      });
    }
    await post('events', { pixel_key: pk, event_type: 'purchase', transaction_id: 'order-eur', amount: 9.99, currency: 'EUR', code: 'anna', occurred_at: minutesAgo(20) });
    // A refund names the purchase it refunds (order-01, 10 USD).
    await post('events', { pixel_key: pk, event_type: 'refund', transaction_id: 'order-01', amount: 10, currency: 'USD', occurred_at: minutesAgo(10) });
    await insertSandboxPurchase(t, brand.id, new Date(Date.now() - 5 * 60_000));
    await t.settle();

    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    page = await context.newPage();
    watch = watchPage(page, base);
    page.on('request', (req) => {
      // allHeaders: the headers as sent, Origin included (headers() has only the page's own).
      if (req.method() !== 'GET') writeOrigins.push(req.allHeaders().then((h) => h.origin ?? 'none'));
    });
  });

  afterAll(async () => {
    await browser?.close();
    if (t) await destroyTestService(t);
  });

  it('serves the pages with a CSP that allows no inline script, and loads nothing from another origin', async () => {
    const res = await page.goto(`${base}/portal/`);
    const csp = res!.headers()['content-security-policy']!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    await page.getByRole('heading', { name: 'Log in to your brand portal' }).waitFor();
    expect(await page.locator('script:not([src])').count()).toBe(0);
    expect(await page.locator('[style]').count()).toBe(0);
  });

  it('shows the login form without a session, refuses a wrong password in words, and logs in', async () => {
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => text('.login [role="alert"]')).toBe('That email and password do not match an account.');
    await shoot('login');

    await page.getByLabel('Password').fill(PORTAL_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await settled();
    const cookie = (await context.cookies(`${base}/api/client/`)).find((c) => c.name === 'svc_session');
    expect(cookie).toMatchObject({ httpOnly: true, path: '/api/client', sameSite: 'Lax' });
    expect(await page.title()).toBe('Overview · Acme portal');
  });

  it('shows the overview numbers the API answers, each with its change against the previous period', async () => {
    const api = await apiAsBrowser('/overview');
    expect(api).toMatchObject({ clicks: 11, installs: 1, conversions: PURCHASES + 1, refunds: { USD: 10 }, previous: { clicks: 4 } });
    expect(await text('[data-metric="clicks"] .value')).toBe(int.format(api.clicks));
    expect(await text('[data-metric="installs"] .value')).toBe(int.format(api.installs));
    expect(await text('[data-metric="conversions"] .value')).toBe(int.format(api.conversions));
    expect(await text('[data-metric="revenue"] [data-currency="USD"] .value')).toBe(usd.format(api.revenue.USD));
    expect(await text('[data-metric="revenue"] [data-currency="EUR"] .value')).toBe(eur.format(api.revenue.EUR));
    expect(await text('[data-metric="refunds"] [data-currency="USD"] .value')).toBe(usd.format(10));
    // 11 clicks against 4: +175%; installs and conversions had none before.
    expect(await text('[data-metric="clicks"] .change [aria-hidden]')).toBe('▲ +175% vs previous');
    expect(await text('[data-metric="clicks"] .change .visually-hidden')).toBe('up 175% from 4 in the previous period');
    expect(await text('[data-metric="installs"] .change [aria-hidden]')).toBe('▲ new vs previous');
    // Where the installs came from, by resolution method: the one install came through the install page's clipboard.
    expect(api.installs_by_method).toEqual({ clipboard: 1 });
    expect(await page.locator('[data-metric="installs"] .sources li').allTextContents()).toEqual(['1 from the install page (clipboard)']);
    expect(await text('.hint.compare')).toContain('Changes compare with');
    // More revenue is good news, more refunds bad news.
    expect(await page.locator('[data-metric="revenue"] [data-currency="USD"] .change').getAttribute('class')).toContain('good');
    expect(await page.locator('[data-metric="refunds"] [data-currency="USD"] .change').getAttribute('class')).toContain('bad');

    // The chart is drawn (uPlot's canvas), and its table holds the API's days, newest first.
    expect(await page.locator('figure.chart .plot canvas').count()).toBeGreaterThan(0);
    // Away from the plot, its legend holds the period's totals.
    const legend = page.locator('figure.chart .u-legend tr.u-series');
    expect(await legend.nth(0).locator('.u-value').textContent()).toBe('all days');
    expect(await legend.nth(1).locator('.u-value').textContent()).toBe(int.format(api.clicks));
    expect(await legend.nth(4).locator('.u-value').textContent()).toBe(int.format(api.previous.clicks));
    await shoot('overview');
    await page.getByText('Show the numbers per day').click();
    const rows = page.locator('details.daily tbody tr');
    expect(await rows.count()).toBe(api.daily.length);
    const todayRow = api.daily.at(-1);
    expect((await rows.first().locator('td').allTextContents()).slice(0, 3)).toEqual([int.format(todayRow.clicks), int.format(todayRow.installs), int.format(todayRow.conversions)]);
  });

  it('changes the period with the picker, then to custom dates', async () => {
    await page.locator('label', { hasText: 'Last 7 days' }).click();
    await page.waitForURL(/period=7d/);
    await settled();
    const week = await apiAsBrowser('/overview?period=7d');
    expect(week).toMatchObject({ start_date: addDays(today, -6), clicks: 11 });
    expect(await text('[data-metric="clicks"] .value')).toBe(int.format(week.clicks));
    expect(await text('.range-shown')).toContain(new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(`${week.start_date}T00:00:00Z`)));

    // Arrow keys move through the periods, one step after another (the page redrawn keeps the focus).
    await page.getByRole('radio', { name: 'Last 7 days' }).focus();
    await page.keyboard.press('ArrowRight');
    await page.waitForURL(/period=30d/);
    await settled();
    await page.keyboard.press('ArrowRight');
    await page.waitForURL(/period=90d/);
    await settled();
    expect(await page.getByRole('radio', { name: 'Last 90 days' }).isChecked()).toBe(true);
    // Through a page without a period (Setup), the navigation still carries it.
    const nav = page.getByRole('navigation', { name: 'Portal pages' });
    await nav.getByRole('link', { name: 'Setup' }).click();
    await page.getByRole('heading', { level: 1, name: 'Setup' }).waitFor();
    await nav.getByRole('link', { name: 'Overview' }).click();
    await page.waitForURL(/\/portal\/\?period=90d$/);
    await settled();
    expect(await page.getByRole('radio', { name: 'Last 90 days' }).isChecked()).toBe(true);

    await page.locator('label', { hasText: 'Custom dates' }).click();
    await page.getByLabel('From', { exact: true }).fill(addDays(today, -45));
    await page.getByLabel('To', { exact: true }).fill(addDays(today, -1));
    await page.getByRole('button', { name: 'Apply dates' }).click();
    await page.waitForURL(/start_date=/);
    await settled();
    const custom = await apiAsBrowser(`/overview?start_date=${addDays(today, -45)}&end_date=${addDays(today, -1)}`);
    expect(custom.clicks).toBe(7); // 3 days ago and 40 days ago
    expect(await text('[data-metric="clicks"] .value')).toBe(int.format(custom.clicks));
    expect(await page.locator('details.daily tbody tr').count()).toBe(45);

    await page.locator('label', { hasText: 'Last 30 days' }).click();
    await page.waitForURL(/period=30d/);
    await settled();
  });

  it('shows no change against a previous period that holds nothing (All time starts at the first fact), and says why', async () => {
    await open('/portal/?period=all');
    const all = await apiAsBrowser('/overview?period=all');
    expect(all.previous).toMatchObject({ clicks: 0, bot_clicks: 0, installs: 0, conversions: 0 });
    expect(await text('[data-metric="clicks"] .value')).toBe(int.format(all.clicks));
    expect(await page.locator('[data-metric] .change').count()).toBe(0);
    expect(await text('.hint.compare')).toContain('No change is shown: the period before');
    await shoot('overview-all');
    await open('/portal/?period=30d');
  });

  it('sorts the links table, filters it by creator and copies a link', async () => {
    await page.getByRole('navigation', { name: 'Portal pages' }).getByRole('link', { name: 'Links' }).click();
    await page.getByRole('heading', { level: 1, name: 'Links' }).waitFor();
    await settled();
    const api = await apiAsBrowser('/links?period=30d');
    const slugs = () => page.locator('table.sortable tbody tr td[data-label="Link"]').allTextContents();
    expect((await slugs()).sort()).toEqual(api.data.map((l: { domain: string; slug: string }) => `${l.domain}/${l.slug}`).sort());
    const annaRow = page.locator('tbody tr', { hasText: `${fx.hostname}/anna` }).filter({ hasNotText: 'anna-app' });
    const annaApi = api.data.find((l: { slug: string }) => l.slug === 'anna');
    expect(await annaRow.locator('td[data-label="Clicks"]').textContent()).toBe(int.format(annaApi.clicks));
    expect(await annaRow.locator('td[data-label="Conversions"]').textContent()).toBe(int.format(annaApi.conversions));

    // Clicks: most first, then (a second press, from the keyboard) fewest first.
    const sortClicks = page.getByRole('button', { name: /^Clicks/ });
    await sortClicks.click();
    expect(await page.locator('th', { has: sortClicks }).getAttribute('aria-sort')).toBe('descending');
    expect(await slugs()).toEqual([`${fx.hostname}/anna`, `${fx.hostname}/bob`, `${fx.hostname}/anna-app`]);
    await sortClicks.focus();
    await page.keyboard.press('Enter');
    expect(await page.locator('th', { has: sortClicks }).getAttribute('aria-sort')).toBe('ascending');
    expect(await slugs()).toEqual([`${fx.hostname}/anna-app`, `${fx.hostname}/bob`, `${fx.hostname}/anna`]);

    await page.getByRole('button', { name: `Copy link ${fx.hostname}/bob` }).click();
    // A name under localhost is this machine: plain http on the port the service is reached at, not https on 443.
    expect(await clipboard()).toBe(`http://${fx.hostname}:${new URL(base).port}/bob`);
    await shoot('links');

    await page.getByLabel('Creator').selectOption({ label: 'Bob Stone' });
    await page.waitForURL(new RegExp(`creator_id=${fx.creatorBob.id}`));
    await settled();
    expect(await slugs()).toEqual([`${fx.hostname}/bob`]);
  });

  it('shows the codes with the API numbers', async () => {
    await open('/portal/codes');
    const api = await apiAsBrowser('/codes');
    expect(api.data).toHaveLength(1);
    const row = page.locator('table.sortable tbody tr');
    expect(await row.count()).toBe(1);
    expect(await row.locator('td[data-label="Code"]').textContent()).toBe('ANNA');
    expect(await row.locator('td[data-label="Conversions"]').textContent()).toBe(int.format(api.data[0].conversions));
    expect(await row.locator('td[data-label="Revenue"]').textContent()).toBe(eur.format(9.99));
    await shoot('codes');
  });

  it('pages the events feed with its cursor, and shows sandbox rows apart', async () => {
    await open('/portal/events');
    const all: string[] = [];
    let cursor = '';
    do {
      const pageOfApi = await apiAsBrowser(`/events?limit=100${cursor}`);
      all.push(...pageOfApi.data.map((e: { transaction_id: string }) => e.transaction_id));
      cursor = pageOfApi.pagination.has_more ? `&cursor=${encodeURIComponent(pageOfApi.pagination.next_cursor)}` : '';
    } while (cursor);
    expect(all).toHaveLength(PURCHASES + 2);

    const shown = () => page.locator('table.events tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-transaction')!));
    const first = await shown();
    expect(first).toEqual(all.slice(0, 25));
    expect(await text('.pager .page-no')).toBe('Page 1');
    const refund = page.locator('tr[data-transaction="order-01"]').filter({ hasText: usd.format(-10) });
    expect(await refund.locator('td[data-label="Amount"]').textContent()).toBe(usd.format(-10));
    await shoot('events');

    await page.getByRole('button', { name: 'Older →' }).click();
    await expect.poll(() => text('.pager .page-no')).toBe('Page 2');
    expect(await shown()).toEqual(all.slice(25));
    expect(await page.getByRole('button', { name: 'Older →' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: '← Newer' }).click();
    await expect.poll(() => text('.pager .page-no')).toBe('Page 1');
    expect(await shown()).toEqual(first);
    expect(first).not.toContain('sandbox-1');

    await page.locator('label', { hasText: 'Sandbox' }).click();
    await page.waitForURL(/sandbox=true/);
    await settled();
    expect(await shown()).toEqual(['sandbox-1']);
    expect(await text('tr[data-transaction="sandbox-1"] td[data-label="Event"]')).toContain('Sandbox');
    expect(await page.getByRole('note').textContent()).toContain('never count');

    await page.getByLabel('Event type').selectOption('refund');
    await page.waitForURL(/event_type=refund/);
    await settled();
    expect(await text('.empty')).toContain('No events match these filters');
  });

  it('shows the setup snippet and copies it', async () => {
    await open('/portal/setup');
    const api = await apiAsBrowser('/setup');
    expect(await text('pre[aria-label="pixel snippet"]')).toBe(api.snippet.trim());
    await page.getByRole('button', { name: 'Copy pixel snippet' }).click();
    expect(await clipboard()).toBe(api.snippet);
    expect(await page.getByRole('link', { name: 'Read the SDK guide' }).getAttribute('href')).toBe(api.sdk_docs_url);
    // Both packages' start-up code (the React Native one is also answered as sdk_snippet).
    expect(await text('pre[aria-label="React Native configuration"]')).toBe(api.sdk_snippets.react_native.trim());
    expect(await text('pre[aria-label="Swift configuration"]')).toBe(api.sdk_snippets.swift.trim());
    await shoot('setup');
  });

  it('adds, checks and removes a custom domain, and says in words why a write was refused', async () => {
    await open('/portal/domains');
    expect(await text('section[aria-labelledby="own-title"] .empty')).toContain('No custom domain yet');
    await page.getByLabel('Host name').fill('go.acme-portal.test');
    await page.getByRole('button', { name: 'Add domain' }).click();
    const item = page.locator('li.domain', { hasText: 'go.acme-portal.test' });
    await item.waitFor();
    const listed = (await apiAsBrowser('/domains')).data.find((d: { hostname: string }) => d.hostname === 'go.acme-portal.test');
    expect(listed).toBeDefined();
    for (const record of listed.dns) expect(await item.locator('table.dns').textContent()).toContain(record.value);
    await item.getByRole('button', { name: 'Check now' }).click();
    await expect.poll(async () => (await item.locator('.hint').textContent())?.startsWith('Last checked')).toBe(true);
    await shoot('domains');

    // A host name this brand added already is taken: the refusal reads as a sentence.
    await page.getByLabel('Host name').fill('go.acme-portal.test');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await expect.poll(() => text('form.add-domain .form-error')).toBe('That domain is already registered. Choose another host name.');
    // A localhost name (the shared domain's) is never a brand's: in words too.
    await page.getByLabel('Host name').fill(fx.hostname);
    await page.getByRole('button', { name: 'Add domain' }).click();
    await expect.poll(() => text('form.add-domain .form-error')).toMatch(/^That host name cannot be added: use a domain of your own/);
    // So does a 422 with zod's details: in words, not zod's.
    await page.getByLabel('Host name').fill(`${'a'.repeat(300)}.test`);
    await page.getByRole('button', { name: 'Add domain' }).click();
    await expect.poll(() => text('form.add-domain .form-error')).toBe('The host name is too long (300 characters at most).');

    await item.getByRole('button', { name: 'Remove' }).click();
    await item.getByRole('button', { name: 'Yes, remove go.acme-portal.test' }).click();
    await item.waitFor({ state: 'detached' });
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.id)).toBe('own-title');
    expect((await apiAsBrowser('/domains')).data.map((d: { hostname: string }) => d.hostname)).toEqual([fx.hostname]);
  });

  it('creates a connection and shows its webhook URL, never its secret', async () => {
    await open('/portal/connections');
    const card = page.locator('li.connection[data-provider="revenuecat"]');
    await card.getByText('Set up RevenueCat').click();
    // Before connecting, the card says what a connection without a secret allows.
    expect(await card.locator('form.connect .unsigned').textContent()).toMatch(/^Without a signing secret, anyone who has the webhook URL/);
    await card.getByLabel(/Signing secret/).fill('rc-secret-value-123');
    await card.getByRole('button', { name: 'Connect RevenueCat' }).click();
    await card.locator('code.webhook-url').waitFor();
    const api = (await apiAsBrowser('/connections')).data.find((c: { provider: string }) => c.provider === 'revenuecat');
    expect(await card.locator('code.webhook-url').textContent()).toBe(api.webhook_url);
    expect(api.webhook_url).toMatch(/svw_/);
    expect(await card.locator('.badge').first().textContent()).toBe('Waiting for the first event');
    expect(await card.locator('.secret-state').textContent()).toContain('Stored');
    expect(await card.locator('p.unsigned').count()).toBe(0);
    expect(await page.content()).not.toContain('rc-secret-value-123');
    expect(JSON.stringify(api)).not.toContain('rc-secret-value-123');

    // The secret is replaced through its form, and still never shown.
    await card.getByLabel('Replace the signing secret').fill('rc-secret-value-456');
    await card.getByRole('button', { name: 'Save secret' }).click();
    await expect.poll(() => page.locator('#announcer').textContent()).toBe('RevenueCat signing secret saved');
    expect(await page.content()).not.toContain('rc-secret-value-456');

    // Connected without a secret, a card says so plainly, and what it allows.
    const adapty = page.locator('li.connection[data-provider="adapty"]');
    await adapty.getByText('Set up Adapty').click();
    await adapty.getByRole('button', { name: 'Connect Adapty' }).click();
    await adapty.locator('code.webhook-url').waitFor();
    expect(await adapty.locator('p.unsigned').textContent()).toMatch(/^No signing secret is set: anyone who has the webhook URL .* can post events for your brand/);

    // A setting that is not text (Stripe's flag) goes to the API as what it is.
    const stripe = page.locator('li.connection[data-provider="stripe"]');
    await stripe.getByText('Set up Stripe').click();
    await stripe.getByLabel(/Signing secret/).fill('whsec_test_value');
    await stripe.getByLabel('first_invoice_as_purchase').check();
    await stripe.getByRole('button', { name: 'Connect Stripe' }).click();
    await stripe.locator('code.webhook-url').waitFor();
    const stripeApi = (await apiAsBrowser('/connections')).data.find((c: { provider: string }) => c.provider === 'stripe');
    expect(stripeApi.settings).toEqual({ first_invoice_as_purchase: true });

    // A setting the provider refuses is explained in words.
    const shopify = page.locator('li.connection[data-provider="shopify"]');
    await shopify.getByText('Set up Shopify').click();
    await shopify.getByLabel(/Signing secret/).fill('shpss_test_value');
    await shopify.getByLabel('shop_domain (optional)').fill('acme.com');
    await shopify.getByRole('button', { name: 'Connect Shopify' }).click();
    await expect.poll(() => shopify.locator('.form-error').textContent()).toBe('The shop_domain is not in the right form (the shop domain, <shop>.myshopify.com).');

    // Apple signs with its own certificates: its card asks for no secret, and its settings go as the card types them.
    const apple = page.locator('li.connection[data-provider="apple"]');
    await apple.getByText(/^Set up App Store/).click();
    expect(await apple.getByLabel(/Signing secret/).count()).toBe(0);
    await apple.getByLabel('bundle_id').fill('com.acme.app');
    await apple.getByLabel('app_apple_id (optional)').fill('1234567890');
    await apple.getByLabel('environment (optional)').selectOption('production');
    await apple.getByRole('button', { name: /^Connect App Store/ }).click();
    await apple.locator('code.webhook-url').waitFor();
    const appleApi = (await apiAsBrowser('/connections')).data.find((c: { provider: string }) => c.provider === 'apple');
    expect(appleApi.settings).toEqual({ bundle_id: 'com.acme.app', app_apple_id: 1234567890, environment: 'production' });
    expect(await apple.locator('form.secret').count()).toBe(0);
    expect(await apple.locator('.secret-state').count()).toBe(0);
    await shoot('connections');
  });

  it("changes a connection's settings after connecting: the form shows the stored values, an emptied one is removed", async () => {
    const apple = page.locator('li.connection[data-provider="apple"]');
    await apple.getByText('Change settings').click();
    const form = apple.locator('form.settings');
    expect(await form.getByLabel('bundle_id').inputValue()).toBe('com.acme.app');
    expect(await form.getByLabel('app_apple_id (optional)').inputValue()).toBe('1234567890');
    expect(await form.getByLabel('environment (optional)').inputValue()).toBe('production');
    await form.getByLabel('bundle_id').fill('com.acme.shop');
    await form.getByLabel('app_apple_id (optional)').fill('');
    await form.getByLabel('environment (optional)').selectOption('sandbox');
    await form.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => page.locator('#announcer').textContent()).toBe('App Store (App Store Server Notifications V2) settings saved');
    const appleApi = (await apiAsBrowser('/connections')).data.find((c: { provider: string }) => c.provider === 'apple');
    expect(appleApi.settings).toEqual({ bundle_id: 'com.acme.shop', environment: 'sandbox' });
    expect(await apple.locator('dl.endpoints').textContent()).toContain('com.acme.shop');

    // A flag turned off is sent as false, not left out.
    const stripe = page.locator('li.connection[data-provider="stripe"]');
    await stripe.getByText('Change settings').click();
    await stripe.getByLabel('first_invoice_as_purchase').uncheck();
    await stripe.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => page.locator('#announcer').textContent()).toBe('Stripe settings saved');
    expect((await apiAsBrowser('/connections')).data.find((c: { provider: string }) => c.provider === 'stripe').settings).toEqual({ first_invoice_as_purchase: false });
  });

  it('shows a mistyped page address as "Page not found" in the portal, with the way back', async () => {
    await page.goto(`${base}/portal/overveiw`);
    await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
    await page.getByRole('link', { name: 'Go to the overview.' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await settled();
  });

  it('logs out: the login form shows and the old session cookie answers 401', async () => {
    const cookie = (await context.cookies(`${base}/api/client/`)).find((c) => c.name === 'svc_session')!;
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in to your brand portal' }).waitFor();
    expect(await text('.login [role="status"]')).toBe('You are logged out.');
    expect((await portal(t, `svc_session=${cookie.value}`).get('/overview')).statusCode).toBe(401);
    await page.reload();
    await page.getByRole('heading', { name: 'Log in to your brand portal' }).waitFor();
  });

  it("after logging out and in as another brand's user, offers only that brand's creators", async () => {
    const login = async (email: string) => {
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PORTAL_PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
    };
    const creatorChoices = async () => {
      await page.getByRole('navigation', { name: 'Portal pages' }).getByRole('link', { name: 'Events' }).click();
      await page.getByRole('heading', { level: 1, name: 'Events' }).waitFor();
      await settled();
      return page.getByLabel('Creator').locator('option').allTextContents();
    };
    await login(EMAIL);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await expect.poll(creatorChoices).toEqual(['All creators', 'Anna Berg', 'Bob Stone']);
    await page.getByRole('button', { name: 'Log out' }).click();
    await login(EMPTY_EMAIL); // the same page, not reloaded
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await expect.poll(creatorChoices).toEqual(['All creators']);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in to your brand portal' }).waitFor();
  });

  it('tells a brand without facts what to do next, and says in words when the service fails', async () => {
    const fresh = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
    const other = await fresh.newPage();
    await other.goto(`${base}/portal/links`);
    await other.getByLabel('Email').fill(EMPTY_EMAIL);
    await other.getByLabel('Password').fill(PORTAL_PASSWORD);
    await other.getByRole('button', { name: 'Log in' }).click();
    await other.getByRole('heading', { level: 1, name: 'Links' }).waitFor();
    await settled(other);
    expect(await other.locator('.empty').textContent()).toContain("put it in the creator's bio or posts");

    await other.getByRole('navigation', { name: 'Portal pages' }).getByRole('link', { name: 'Overview' }).click();
    await other.getByRole('heading', { name: 'No clicks yet' }).waitFor();
    expect(await other.locator('.empty').textContent()).toContain('Purchases and sign-ups appear once the pixel or the app SDK sends them');
    expect(await other.locator('[data-metric="revenue"] .value').textContent()).toBe('No revenue yet');
    expect(await screenshots(other, 'portal-overview-empty', { fullPage: true })).toEqual({ desktop: 0, phone: 0 });

    // A read that takes its time shows that it is loading.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await other.route('**/api/client/attribution/codes?**', async (route) => {
      await held;
      await route.continue();
    });
    await other.getByRole('navigation', { name: 'Portal pages' }).getByRole('link', { name: 'Codes' }).click();
    await other.getByRole('status').filter({ hasText: 'Loading codes…' }).waitFor();
    release();
    await settled(other);
    expect(await other.locator('.empty').textContent()).toContain('No codes yet');

    await other.route('**/api/client/attribution/events?**', (route) => route.fulfill({ status: 500, contentType: 'application/json', body: '{"error":"internal_error"}' }));
    await other.getByRole('navigation', { name: 'Portal pages' }).getByRole('link', { name: 'Events' }).click();
    await expect.poll(async () => (await other.getByRole('alert').textContent()) ?? '').toContain('The service had a problem answering. Try again in a moment.');
    await fresh.close();
  });

  it('raised no page error, failed no request but the refusals above, sent every write with its own Origin and requested nothing from another origin', async () => {
    expect(watch.errors).toEqual([]);
    expect(watch.foreignRequests).toEqual([]);
    // Every write (login, domains, connections, logout) carried this origin, which the portal's guard requires.
    expect(writeOrigins.length).toBeGreaterThan(5);
    expect(new Set(await Promise.all(writeOrigins))).toEqual(new Set([base]));
    // Failed responses are checked one by one (the refusals the tests provoke).
    expect(new Set(watch.failedResponses)).toEqual(
      new Set([
        '401 GET /api/client/auth/me',
        '401 POST /api/client/auth/login',
        '409 POST /api/client/attribution/domains',
        '422 POST /api/client/attribution/domains',
        '422 POST /api/client/attribution/connections',
        '404 GET /portal/overveiw',
      ]),
    );
  });
});
