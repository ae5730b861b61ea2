import { existsSync, mkdirSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { freePort } from './free-port';
import { destroyTestService, startTestService, type TestService } from './harness';

/**
 * Debian's headless Chromium for the browser tests. CI installs it (.ci/run), so there a
 * missing browser fails the run; elsewhere the browser tests are skipped with a warning.
 */
const CHROMIUM = '/usr/bin/chromium';

export function chromiumInstalled(what: string): boolean {
  const installed = existsSync(CHROMIUM);
  if (!installed && process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium`);
  if (!installed) console.warn(`skipping the ${what} browser tests: ${CHROMIUM} is not installed (apt-get install -y chromium)`);
  return installed;
}

/** Without the background-networking flags Chromium keeps trying hosts this closed network refuses. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** The service (no workers) listening on a free loopback port that PUBLIC_BASE_URL names, for a browser to load from `base`. */
export async function startListeningService(): Promise<{ t: TestService; base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t = await startTestService({ workers: false, env: { PUBLIC_BASE_URL: base } });
  await t.app.listen({ port, host: '127.0.0.1' }).catch(async (err) => {
    await destroyTestService(t);
    throw err;
  });
  return { t, base };
}

/** What a page did that its test checks at the end. */
export type PageWatch = {
  /** Uncaught exceptions and console errors (CSP violations among them), but failed resources: those are in failedResponses. */
  errors: string[];
  /** Requests to any origin but those given (data: URLs aside). */
  foreignRequests: string[];
  /** Answers of 400 and above, as `<status> <method> <path>`. */
  failedResponses: string[];
};

export function watchPage(page: Page, ...origins: string[]): PageWatch {
  const watch: PageWatch = { errors: [], foreignRequests: [], failedResponses: [] };
  page.on('pageerror', (err) => watch.errors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) watch.errors.push(msg.text());
  });
  page.on('request', (req) => {
    const url = req.url();
    if (!url.startsWith('data:') && !origins.some((o) => url.startsWith(`${o}/`))) watch.foreignRequests.push(url);
  });
  page.on('response', (res) => {
    if (res.status() >= 400) watch.failedResponses.push(`${res.status()} ${res.request().method()} ${new URL(res.url()).pathname}`);
  });
  return watch;
}

const ARTIFACTS = new URL('../artifacts/', import.meta.url).pathname;
const SIZES = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } } as const;

/**
 * Screenshots at desktop and phone width into test/artifacts/ (git-ignored) as `<name>-desktop.png`
 * and `<name>-phone.png` (`fullPage`: also `<name>-<width>-full.png`), then the page gets its own
 * size back. Answers how many pixels wider than the window the page is at each width.
 */
export async function screenshots(page: Page, name: string, opts: { fullPage?: boolean } = {}): Promise<Record<keyof typeof SIZES, number>> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const own = page.viewportSize();
  const overflow = { desktop: 0, phone: 0 };
  for (const [label, size] of Object.entries(SIZES) as [keyof typeof SIZES, (typeof SIZES)[keyof typeof SIZES]][]) {
    await page.setViewportSize(size);
    await page.waitForTimeout(150); // charts follow the width on the next frame
    await page.screenshot({ path: `${ARTIFACTS}${name}-${label}.png` });
    if (opts.fullPage) await page.screenshot({ path: `${ARTIFACTS}${name}-${label}-full.png`, fullPage: true });
    overflow[label] = await page.evaluate(() => {
      const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });
  }
  if (own) await page.setViewportSize(own);
  return overflow;
}
