import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `npm pack` in sdk/react-native builds dist/ and makes the tarball an app installs; a scratch
 * React Native-shaped project (its package.json naming the dependency, no React Native runtime)
 * installs that tarball, imports the package from Node and type-checks against its declarations.
 */

const PACKAGE_DIR = new URL('../../sdk/react-native/', import.meta.url).pathname;
const TSC = new URL('../../node_modules/typescript/bin/tsc', import.meta.url).pathname;

let dir: string;
let packed: { filename: string; files: { path: string }[] };
let app: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-sdk-pack-'));
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: PACKAGE_DIR,
    env: { ...process.env, PUBLIC_BASE_URL: 'https://svc.example.com/' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // npm prints the prepack script's output before the JSON.
  packed = JSON.parse(out.slice(out.indexOf('[')))[0];

  app = join(dir, 'AcmeApp');
  mkdirSync(app);
  const manifest = {
    name: 'acme-app',
    version: '1.0.0',
    private: true,
    type: 'module',
    main: 'index.js',
    dependencies: { '@svc/react-native': `file:../${packed.filename}` },
  };
  writeFileSync(join(app, 'package.json'), JSON.stringify(manifest, null, 2));
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app, stdio: 'pipe' });
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm pack of @svc/react-native', () => {
  it('packs dist/ (ES module and declarations) and the README, nothing else', () => {
    expect(packed.filename).toBe('svc-react-native-0.1.0.tgz');
    expect(packed.files.map((f) => f.path).sort()).toEqual(['README.md', 'dist/index.d.ts', 'dist/index.js', 'package.json']);
    const installed = JSON.parse(readFileSync(join(app, 'node_modules/@svc/react-native/package.json'), 'utf8'));
    expect(installed.dependencies ?? {}).toEqual({});
  });

  it('points every entry a bundler may pick (Metro reads "react-native" first) at the code carrying the written endpoint', () => {
    const root = join(app, 'node_modules/@svc/react-native');
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    const { types, ...conditions } = manifest.exports['.'];
    const entries = [manifest.main, manifest.module, manifest['react-native'], manifest.browser, ...Object.values(conditions)].filter((e) => e !== undefined);
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) expect(readFileSync(join(root, entry), 'utf8'), entry).toContain('export const DEFAULT_ENDPOINT = "https://svc.example.com";');
    expect(types).toBe('./dist/index.d.ts');
  });

  it('runs a first launch, a purchase made before the install and one after, from Node in the scratch app, on the endpoint written in at pack time', () => {
    writeFileSync(
      join(app, 'index.js'),
      `import { configure, trackInstall, trackPurchase, getInstallId, getAttribution, DEFAULT_ENDPOINT } from '@svc/react-native';
const requests = [];
globalThis.fetch = async (url, init) => {
  requests.push({ url, body: JSON.parse(init.body) });
  const body = url.endsWith('/installs')
    ? { ok: true, duplicate: false, install: { install_id: JSON.parse(init.body).install_id, attributed: false } }
    : { ok: true, duplicate: false };
  return new Response(JSON.stringify(body), { status: url.endsWith('/installs') ? 201 : 200 });
};
const store = new Map();
const storage = { getItem: async (k) => store.get(k) ?? null, setItem: async (k, v) => void store.set(k, v) };
let early;
try { getInstallId(); } catch (e) { early = e.message; }
configure({ pixelKey: 'pk_app', platform: 'android', storage, appVersion: '1.0.0' });
const early_purchase = await trackPurchase({ transactionId: 'gpa.0001', amount: 4.99, currency: 'usd' });
const install = await trackInstall({ readClipboard: true });
const again = await trackInstall();
const purchase = await trackPurchase({ transactionId: 'gpa.1234', amount: 2.99, currency: 'EUR' });
const yen = await trackPurchase({ transactionId: 'gpa.5678', amount: 1200, currency: 'JPY' });
const attribution = await getAttribution();
console.log(JSON.stringify({ early, DEFAULT_ENDPOINT, early_purchase, install, again, purchase, yen, attribution, id: await getInstallId(), requests, stored: Object.fromEntries(store) }));
`,
    );
    const out = JSON.parse(execFileSync(process.execPath, ['index.js'], { cwd: app, encoding: 'utf8' }));
    expect(out.early).toMatch(/before configure/);
    expect(out.DEFAULT_ENDPOINT).toBe('https://svc.example.com');
    const answer = { ok: true, duplicate: false, install: { install_id: out.id, attributed: false } };
    expect(out.early_purchase).toBe(false);
    expect(out.install).toEqual(answer);
    expect(out.again).toBeNull();
    expect(out.purchase).toBe(true);
    expect(out.yen).toBe(false);
    expect(out.attribution).toEqual(answer);
    // The purchase made before the install waited for it, then went right after it.
    expect(out.requests.map((r: { url: string }) => r.url)).toEqual([
      'https://svc.example.com/api/public/attribution/installs',
      'https://svc.example.com/api/public/attribution/events',
      'https://svc.example.com/api/public/attribution/events',
    ]);
    expect(out.requests[1].body).toMatchObject({ external_user_id: out.id, transaction_id: 'gpa.0001', currency: 'USD' });
    expect(out.requests[2].body).toMatchObject({ source: 'sdk', event_type: 'purchase', external_user_id: out.id, transaction_id: 'gpa.1234', amount: 2.99, currency: 'EUR' });
    expect(out.stored).toEqual({
      svc_install_id: out.id,
      svc_install_reported: 'true',
      svc_install_answer: JSON.stringify(answer),
      svc_pending_install: '',
      svc_pending_purchases: '[]',
    });
  });

  it('type-checks an app against the packed declarations', () => {
    writeFileSync(
      join(app, 'App.ts'),
      `import { createClient, type InstallAnswer, type OpenAnswer, type SvcConfig } from '@svc/react-native';
declare const storage: SvcConfig['storage'];
const client = createClient({ pixelKey: 'pk_app', platform: 'ios', storage, clipboard: { getString: async () => '' } });
export const answer: Promise<InstallAnswer | null> = client.trackInstall({ readClipboard: true, code: 'MAYA' });
export const sent: Promise<boolean> = client.trackPurchase({ transactionId: 't', amount: 1, currency: 'USD' });
export const kept: Promise<InstallAnswer | null> = client.getAttribution();
export const would: Promise<boolean> = client.wouldReadClipboard();
export const pasted: Promise<InstallAnswer | null> = client.trackInstall({ pastedText: null });
export const opened: Promise<OpenAnswer | null> = client.trackOpen('https://maya.link/app');
export const deepLink = (a: InstallAnswer): string | null | undefined => a.install.deep_link;
`,
    );
    writeFileSync(join(app, 'bad.ts'), `import { createClient } from '@svc/react-native';\ncreateClient({ pixelKey: 'pk', platform: 'web' });\n`);
    const tsconfig = { compilerOptions: { strict: true, noEmit: true, module: 'ESNext', moduleResolution: 'bundler', target: 'ES2020', lib: ['ES2020'], types: [] } };
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ ...tsconfig, files: ['App.ts'] }));
    writeFileSync(join(app, 'tsconfig.bad.json'), JSON.stringify({ ...tsconfig, files: ['bad.ts'] }));
    execFileSync(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: app, stdio: 'pipe' });
    let bad = '';
    try {
      execFileSync(process.execPath, [TSC, '-p', 'tsconfig.bad.json'], { cwd: app, encoding: 'utf8', stdio: 'pipe' });
    } catch (e) {
      bad = String((e as { stdout?: string }).stdout);
    }
    expect(bad).toMatch(/'"web"' is not assignable|storage/);
  });
});
