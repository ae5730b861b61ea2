import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

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
