import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createClient, type SvcConfig } from '../../sdk/react-native/src/index';
import { appLinkCredit, type AttributionBrand, attributionBrand, IPHONE } from '../attribution/public/setup';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { createPortalUser, type Portal, portal, portalLogin } from '../portal/helpers';

/**
 * The SDK source, as an app imports it, against the real service listening on a real port with
 * the global fetch: installs credited by clipboard, pasted text and code, once across launches,
 * offline then online, purchases made before the install credited to it, an app killed mid-request,
 * a proxy's 404 and a captive portal, JPY refused, the kept answer and its deep link, opens,
 * sandbox, broken storage. Brands and links are made
 * through the internal endpoints; the ledger is read back through the portal.
 */

let t: TestService;
let acme: AttributionBrand;
let endpoint: string;
let closedEndpoint: string;
let brandPortal: Portal;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

beforeAll(async () => {
  t = await startTestService();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as { port: number };
  endpoint = `http://127.0.0.1:${port}`;
  closedEndpoint = `http://127.0.0.1:${await closedPort()}`;
  acme = await attributionBrand(t, 'Acme');
  await createPortalUser(t, acme.brand.id, 'sdk@acme.test');
  brandPortal = portal(t, await portalLogin(t, 'sdk@acme.test'));
});
afterAll(async () => {
  for (const server of fakes) server.closeAllConnections();
  await Promise.all(fakes.map((server) => new Promise((r) => server.close(r))));
  await destroyTestService(t);
});

const fakes: Server[] = [];
/** A server in front of (or instead of) the service, answering as `handle` says: its URL. */
async function fakeServer(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createHttpServer(handle);
  fakes.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** An app's storage (AsyncStorage stand-in) that outlives each "launch" (client). */
function deviceStorage() {
  const map = new Map<string, string>();
  return { map, getItem: async (k: string) => map.get(k) ?? null, setItem: async (k: string, v: string) => void map.set(k, v) };
}

/** One launch of the app: a new client over the device's storage; its log lines are kept. */
function launch(storage: SvcConfig['storage'], extra: Partial<SvcConfig> = {}) {
  const logs: string[] = [];
  const client = createClient({ pixelKey: acme.brand.pixel_key, platform: 'ios', endpoint, storage, appVersion: '3.1.0', log: (m) => void logs.push(m), ...extra });
  return { client, logs };
}

/** A click on the brand's app link from an iPhone, as the install page records it: its token. */
async function appLinkClick(): Promise<string> {
  const res = await fetch(`${endpoint}/api/public/attribution/clicks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ domain: acme.hostname, slug: 'app', user_agent: IPHONE }),
  });
  expect(res.status).toBe(200);
  const { click_token } = (await res.json()) as { click_token: string };
  expect(click_token).toMatch(/^svc_/);
  return click_token;
}

type LedgerItem = Record<string, unknown> & { transaction_id: string; link: { id: unknown; domain: string; slug: string } | null };
/** The brand's ledger rows of `transactionId` (live unless `sandbox`), once the queues settled. */
async function ledger(transactionId: string, sandbox = false): Promise<LedgerItem[]> {
  await t.settle();
  const res = await brandPortal.get(`/events?limit=100&sandbox=${sandbox}`);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().data as LedgerItem[]).filter((e) => e.transaction_id === transactionId);
}

const uniqueTx = (name: string) => `${name}-${Math.random().toString(36).slice(2, 10)}`;

describe('the React Native SDK against the running service', () => {
  it('credits an install by clipboard, reports it once across launches, and a purchase inherits its link', async () => {
    const token = await appLinkClick();
    const storage = deviceStorage();
    const first = launch(storage, { clipboard: { getString: async () => `\n${token} ` } });
    const answer = await first.client.trackInstall({ readClipboard: true });
    const installId = storage.map.get('svc_install_id')!;
    expect(installId).toMatch(UUID_V4);
    expect(answer).toEqual({
      ok: true,
      duplicate: false,
      install: {
        install_id: installId,
        platform: 'ios',
        attributed: true,
        resolution_method: 'clipboard',
        confidence: 0.95,
        ...appLinkCredit(acme),
        deep_link: null,
      },
    });
    expect(storage.map.get('svc_install_reported')).toBe('true');
    expect(first.logs).toEqual([]);

    // Later launches send nothing and never read the clipboard again.
    let reads = 0;
    const second = launch(storage, {
      clipboard: {
        getString: async () => {
          reads++;
          return token;
        },
      },
    });
    expect(await second.client.trackInstall({ readClipboard: true })).toBeNull();
    expect(await second.client.getInstallId()).toBe(installId);
    expect(reads).toBe(0);

    const tx = uniqueTx('clip');
    expect(await second.client.trackPurchase({ transactionId: tx, amount: 4.99, currency: 'USD' })).toBe(true);
    const [row, ...more] = await ledger(tx);
    expect(more).toEqual([]);
    expect(row).toMatchObject({
      event_type: 'purchase',
      source: 'sdk',
      amount: 4.99,
      currency: 'USD',
      sandbox: false,
      external_user_id: installId,
      link: { domain: acme.hostname, slug: 'app' },
      creator: { id: acme.creator.id, name: 'Maya Lopez' },
      resolution_method: 'clipboard',
    });
    expect(String(row!.link!.id)).toBe(String(acme.app.id));
  });

  it('with clipboard reading off, or a clipboard holding anything but a click token, the install is not credited by clipboard', async () => {
    const token = await appLinkClick();
    let reads = 0;
    const off = launch(deviceStorage(), {
      clipboard: {
        getString: async () => {
          reads++;
          return token;
        },
      },
    });
    // Clicks and installs here share 127.0.0.1, so the service may match them by IP: never by clipboard.
    const answer = await off.client.trackInstall();
    expect(answer).toMatchObject({ ok: true, duplicate: false });
    expect(answer?.install.resolution_method).not.toBe('clipboard');
    expect(await off.client.trackInstall({ readClipboard: false })).toBeNull();
    expect(reads).toBe(0);

    const other = launch(deviceStorage(), { clipboard: { getString: async () => `see ${token}` } });
    expect((await other.client.trackInstall({ readClipboard: true }))?.install.resolution_method).not.toBe('clipboard');
    expect(other.logs).toEqual([]);
  });

  it('credits an install by code, and its purchase inherits the code', async () => {
    const { client } = launch(deviceStorage(), { platform: 'android' });
    const answer = await client.trackInstall({ code: ` ${acme.code.label} ` });
    expect(answer?.install).toMatchObject({ platform: 'android', attributed: true, resolution_method: 'code', code: acme.code.label, creator: { id: acme.creator.id } });
    const tx = uniqueTx('code');
    expect(await client.trackPurchase({ transactionId: tx, amount: 12, currency: 'EUR', code: acme.code.label })).toBe(true);
    expect(await ledger(tx)).toEqual([expect.objectContaining({ code: acme.code.label, currency: 'EUR', amount: 12, external_user_id: await client.getInstallId() })]);
  });

  it('offline, the install and a purchase stay pending; online, the next launch sends both once, and a retry is a duplicate', async () => {
    const token = await appLinkClick();
    const storage = deviceStorage();
    const clipboard = { getString: async () => token };
    const offline = launch(storage, { endpoint: closedEndpoint, clipboard });
    expect(await offline.client.trackInstall({ readClipboard: true })).toBeNull();
    const tx = uniqueTx('offline');
    expect(await offline.client.trackPurchase({ transactionId: tx, amount: 7.5, currency: 'GBP' })).toBe(false);
    const installId = storage.map.get('svc_install_id')!;
    expect(storage.map.has('svc_install_reported')).toBe(false);
    expect(JSON.parse(storage.map.get('svc_pending_purchases')!)).toEqual([{ transaction_id: tx, amount: 7.5, currency: 'GBP', occurred_at: expect.any(String) }]);
    expect(offline.logs.some((m) => m.includes('network error'))).toBe(true);

    const online = launch(storage, { clipboard });
    const answer = await online.client.trackInstall({ readClipboard: true });
    expect(answer).toMatchObject({ duplicate: false, install: { install_id: installId, resolution_method: 'clipboard' } });
    expect(storage.map.get('svc_install_reported')).toBe('true');
    expect(storage.map.get('svc_pending_purchases')).toBe('[]');

    // The same transaction again, from yet another launch: the service already has it.
    const again = launch(storage);
    expect(await again.client.trackPurchase({ transactionId: tx, amount: 7.5, currency: 'GBP' })).toBe(true);
    const rows = await ledger(tx);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ external_user_id: installId, resolution_method: 'clipboard', link: { slug: 'app' }, currency: 'GBP', amount: 7.5 });
  });

  it('a purchase before the install waits, then is sent right after it and credited to the install’s link', async () => {
    const token = await appLinkClick();
    const storage = deviceStorage();
    const { client, logs } = launch(storage, { clipboard: { getString: async () => token } });
    // An onboarding paywall: the user buys before the app reports its install.
    const tx = uniqueTx('before-install');
    expect(await client.trackPurchase({ transactionId: tx, amount: 9.99, currency: 'USD' })).toBe(false);
    expect(JSON.parse(storage.map.get('svc_pending_purchases')!)).toEqual([{ transaction_id: tx, amount: 9.99, currency: 'USD', occurred_at: expect.any(String) }]);
    expect(logs.some((m) => m.includes('waits for the install'))).toBe(true);
    expect(await client.trackInstall({ readClipboard: true })).toMatchObject({ install: { resolution_method: 'clipboard', ...appLinkCredit(acme) } });
    expect(storage.map.get('svc_pending_purchases')).toBe('[]');
    expect(await ledger(tx)).toEqual([
      expect.objectContaining({ external_user_id: storage.map.get('svc_install_id'), resolution_method: 'clipboard', link: expect.objectContaining({ slug: 'app' }), amount: 9.99 }),
    ]);
  });

  it('an install left pending offline is not sent by a purchase: the purchase waits, and goes after the next trackInstall with its clipboard link', async () => {
    const token = await appLinkClick();
    const storage = deviceStorage();
    const offline = launch(storage, { endpoint: closedEndpoint, clipboard: { getString: async () => token } });
    expect(await offline.client.trackInstall({ readClipboard: true })).toBeNull();
    expect(JSON.parse(storage.map.get('svc_pending_install')!)).toEqual({ occurred_at: expect.any(String), clipboard_token: token });

    // The next launch purchases before calling trackInstall, and its clipboard now holds something else.
    const online = launch(storage, { clipboard: { getString: async () => 'svc_not_the_one' } });
    const tx = uniqueTx('pending-first');
    expect(await online.client.trackPurchase({ transactionId: tx, amount: 19.99, currency: 'USD' })).toBe(false);
    expect(storage.map.has('svc_install_reported')).toBe(false);
    expect(await online.client.trackInstall({ readClipboard: true })).toMatchObject({ install: { resolution_method: 'clipboard' } });
    expect(storage.map.get('svc_pending_install')).toBe('');
    expect(await ledger(tx)).toEqual([
      expect.objectContaining({ external_user_id: storage.map.get('svc_install_id'), resolution_method: 'clipboard', link: expect.objectContaining({ slug: 'app' }) }),
    ]);
  });

  it('an app killed while its install or its purchase is in flight loses neither: the next launch sends both, credited to the link', async () => {
    const token = await appLinkClick();
    // The request reaches a server that never answers; the app is killed then: what storage holds at that moment is what the next launch has.
    let snapshot = new Map<string, string>();
    const storage = deviceStorage();
    let running = storage;
    const hanging = await fakeServer(() => {
      snapshot = new Map(running.map);
    });
    void launch(storage, { endpoint: hanging, clipboard: { getString: async () => token } }).client.trackInstall({ readClipboard: true });
    await vi.waitFor(() => expect(snapshot.size).toBeGreaterThan(0));
    const restarted = deviceStorage();
    for (const [k, v] of snapshot) restarted.map.set(k, v);
    expect(JSON.parse(restarted.map.get('svc_pending_install')!)).toMatchObject({ clipboard_token: token });

    // The next launch reports the install (its clipboard is empty now), then buys, and is killed mid-purchase.
    const second = launch(restarted, { clipboard: { getString: async () => '' } });
    expect(await second.client.trackInstall({ readClipboard: true })).toMatchObject({ install: { resolution_method: 'clipboard', ...appLinkCredit(acme) } });
    snapshot = new Map();
    running = restarted;
    const tx = uniqueTx('killed');
    void launch(restarted, { endpoint: hanging }).client.trackPurchase({ transactionId: tx, amount: 4.99, currency: 'EUR' });
    await vi.waitFor(() => expect(snapshot.size).toBeGreaterThan(0));
    const third = deviceStorage();
    for (const [k, v] of snapshot) third.map.set(k, v);
    expect(JSON.parse(third.map.get('svc_pending_purchases')!)).toMatchObject([{ transaction_id: tx }]);
    expect(await launch(third).client.trackInstall()).toBeNull();
    expect(await ledger(tx)).toEqual([expect.objectContaining({ resolution_method: 'clipboard', currency: 'EUR', link: expect.objectContaining({ slug: 'app' }) })]);
  });

  it('an app process killed (SIGKILL) while its request is in flight, then started again, loses neither the install’s click token nor the purchase', async () => {
    const token = await appLinkClick();
    const dir = mkdtempSync(join(tmpdir(), 'svc-sdk-kill-'));
    const file = join(dir, 'storage.json');
    // One launch of an app in its own process: the SDK source over a storage file, one call, its result printed.
    const app = `
      import { readFileSync, writeFileSync } from 'node:fs';
      import { createClient } from ${JSON.stringify(new URL('../../sdk/react-native/src/index.ts', import.meta.url).pathname)};
      const [file, endpoint, pixelKey, call, arg] = process.argv.slice(1);
      const read = () => { try { return JSON.parse(readFileSync(file, 'utf8')); } catch { return {}; } };
      const storage = {
        getItem: async (k) => read()[k] ?? null,
        setItem: async (k, v) => writeFileSync(file, JSON.stringify({ ...read(), [k]: v })),
      };
      const client = createClient({ pixelKey, platform: 'ios', endpoint, storage });
      const result = call === 'install' ? await client.trackInstall({ pastedText: arg }) : await client.trackPurchase({ transactionId: arg, amount: 4.99, currency: 'USD' });
      console.log(JSON.stringify(result));
    `;
    const root = new URL('../../', import.meta.url).pathname;
    const run = (endpointUrl: string, call: string, arg: string) =>
      spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', app, file, endpointUrl, acme.brand.pixel_key, call, arg], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    const output = (child: ChildProcess) =>
      new Promise<string>((resolve) => {
        let out = '';
        child.stdout!.on('data', (d) => {
          out += d;
        });
        child.on('exit', () => resolve(out.trim()));
      });
    // A server that kills the app the moment its request arrives.
    let victim: ChildProcess | undefined;
    const killer = await fakeServer(() => victim?.kill('SIGKILL'));
    try {
      victim = run(killer, 'install', token);
      await output(victim);
      expect(victim.signalCode).toBe('SIGKILL');
      expect(JSON.parse(JSON.parse(readFileSync(file, 'utf8')).svc_pending_install)).toMatchObject({ clipboard_token: token });

      const restarted = run(endpoint, 'install', '');
      expect(JSON.parse(await output(restarted))).toMatchObject({ install: { resolution_method: 'clipboard', ...appLinkCredit(acme) } });

      const tx = uniqueTx('sigkill');
      victim = run(killer, 'purchase', tx);
      await output(victim);
      expect(victim.signalCode).toBe('SIGKILL');
      expect(JSON.parse(JSON.parse(readFileSync(file, 'utf8')).svc_pending_purchases)).toMatchObject([{ transaction_id: tx }]);
      // The next launch's first call sends it; the same transaction again is then a duplicate.
      expect(JSON.parse(await output(run(endpoint, 'install', '')))).toBeNull();
      expect(JSON.parse(readFileSync(file, 'utf8')).svc_pending_purchases).toBe('[]');
      expect(await ledger(tx)).toEqual([expect.objectContaining({ resolution_method: 'clipboard', link: expect.objectContaining({ slug: 'app' }) })]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('a proxy answering 404, a gateway answering 408 and a captive portal’s 200 page keep the install pending; the service then credits it', async () => {
    const token = await appLinkClick();
    const storage = deviceStorage();
    const clipboard = { getString: async () => token };
    const answers: [number, string, string][] = [
      [404, 'text/html', '<html><body>Not Found</body></html>'],
      [408, 'application/json', '{"message":"Request Timeout"}'],
      [200, 'text/html', '<!doctype html><title>Sign in to Wi-Fi</title>'],
      [200, 'application/json', '{}'],
    ];
    for (const [status, type, body] of answers) {
      const proxy = await fakeServer((_req, res) => res.writeHead(status, { 'content-type': type }).end(body));
      const { client, logs } = launch(storage, { endpoint: proxy, clipboard });
      expect(await client.trackInstall({ readClipboard: true })).toBeNull();
      expect(await client.trackPurchase({ transactionId: `${token}-x`, amount: 1, currency: 'USD' })).toBe(false);
      expect(storage.map.has('svc_install_reported'), `${status} ${body}`).toBe(false);
      expect(logs.some((m) => m.includes('kept for a later launch')), `${status} ${body}`).toBe(true);
    }
    const answer = await launch(storage, { clipboard: { getString: async () => '' } }).client.trackInstall({ readClipboard: true });
    expect(answer).toMatchObject({ duplicate: false, install: { resolution_method: 'clipboard', ...appLinkCredit(acme) } });
    expect(await ledger(`${token}-x`)).toEqual([expect.objectContaining({ resolution_method: 'clipboard' })]);
  });

  it('refuses a JPY purchase (the service would book it as USD): nothing stored or sent', async () => {
    const storage = deviceStorage();
    const { client, logs } = launch(storage);
    await client.trackInstall();
    const tx = uniqueTx('jpy');
    expect(await client.trackPurchase({ transactionId: tx, amount: 1200, currency: 'JPY' })).toBe(false);
    expect(storage.map.has('svc_pending_purchases')).toBe(false);
    expect(logs.some((m) => m.includes('JPY'))).toBe(true);
    expect(await ledger(tx)).toEqual([]);
    expect(await client.trackPurchase({ transactionId: tx, amount: 12, currency: ' cad ' })).toBe(true);
    expect(await ledger(tx)).toEqual([expect.objectContaining({ currency: 'CAD', amount: 12 })]);
  });

  it('credits an install by text the user pasted, reading no clipboard; the answer is kept and read again at a later launch', async () => {
    const token = await appLinkClick();
    const storage = deviceStorage();
    let reads = 0;
    const clipboard = {
      hasString: async () => true,
      getString: async () => {
        reads++;
        return token;
      },
    };
    const first = launch(storage, { clipboard });
    expect(await first.client.wouldReadClipboard()).toBe(true);
    const answer = await first.client.trackInstall({ pastedText: ` ${token}\n` });
    expect(answer).toMatchObject({ install: { resolution_method: 'clipboard', ...appLinkCredit(acme) } });
    expect(reads).toBe(0);
    expect(await first.client.wouldReadClipboard()).toBe(false);
    const later = launch(storage, { clipboard });
    expect(await later.client.getAttribution()).toEqual(answer);
    expect(JSON.parse(storage.map.get('svc_install_answer')!)).toEqual(answer);
  });

  it('deep links: the install answer carries the link’s deep_link at first and later launches; trackOpen answers an open of a creator link, null for an unknown one', async () => {
    const made = await t.request({
      method: 'POST',
      url: '/api/internal/attribution-links',
      admin: true,
      payload: { ...acme.owner, slug: 'recipe', type: 'app', destination_url: 'https://acme.example/recipes/42', ios_url: 'https://apps.apple.com/app/id123456789', deep_link: '/recipes/42' },
    });
    expect(made.statusCode, made.body).toBe(201);
    const link = made.json() as { id: number | string; deep_link: string };
    expect(link.deep_link).toBe('/recipes/42');
    const click = await fetch(`${endpoint}/api/public/attribution/clicks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domain: acme.hostname, slug: 'recipe', user_agent: IPHONE }),
    });
    const { click_token: token } = (await click.json()) as { click_token: string };

    const storage = deviceStorage();
    const first = launch(storage);
    const answer = await first.client.trackInstall({ pastedText: token });
    expect(answer?.install).toMatchObject({ resolution_method: 'clipboard', link: { slug: 'recipe' }, deep_link: '/recipes/42' });
    // A later launch routes on the same answer, without sending anything.
    const later = launch(storage);
    expect((await later.client.getAttribution())?.install.deep_link).toBe('/recipes/42');

    const opened = await later.client.trackOpen(`https://${acme.hostname}/recipe?utm_source=story`);
    expect(opened).toEqual({ click_token: expect.stringMatching(/^svc_/), deep_link: '/recipes/42', link: { id: Number(link.id), domain: acme.hostname, slug: 'recipe' } });
    // A host that is no attribution domain of this brand: 404 link_not_found, answered null.
    expect(await later.client.trackOpen('https://not-a-creator-link.example/recipe')).toBeNull();
    expect(later.logs.some((m) => m.includes('HTTP 404'))).toBe(true);
    expect([...storage.map.keys()].sort()).toEqual(['svc_install_answer', 'svc_install_id', 'svc_install_reported', 'svc_pending_install']);
  });

  it('records a purchase made with sandbox: true as live revenue', async () => {
    const { client, logs } = launch(deviceStorage(), { sandbox: true });
    await client.trackInstall();
    const tx = uniqueTx('sandbox');
    expect(await client.trackPurchase({ transactionId: tx, amount: 0.99, currency: 'USD' })).toBe(true);
    expect(await ledger(tx)).toEqual([expect.objectContaining({ sandbox: false, amount: 0.99 })]);
    expect(await ledger(tx, true)).toEqual([]);
    expect(logs.some((m) => m.includes('recorded as live revenue'))).toBe(true);
  });

  it('with storage that fails on every call, nothing throws, the install is not sent and the purchase is still recorded', async () => {
    const broken = {
      getItem: () => {
        throw new Error('disk full');
      },
      setItem: () => Promise.reject(new Error('disk full')),
    };
    const sent: string[] = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = ((url: string, init?: RequestInit) => {
      sent.push(new URL(url).pathname);
      return realFetch(url, init);
    }) as typeof fetch;
    try {
      const { client, logs } = launch(broken as unknown as SvcConfig['storage']);
      // An install under an ID storage cannot keep would be counted again at every launch.
      expect(await client.trackInstall({ readClipboard: true, code: acme.code.label })).toBeNull();
      const installId = await client.getInstallId();
      expect(installId).toMatch(UUID_V4);
      // No install carries the launch's ID, so a purchase credits a creator only through its own code.
      const [bare, coded] = [uniqueTx('broken'), uniqueTx('broken-code')];
      expect(await client.trackPurchase({ transactionId: bare, amount: 1, currency: 'USD' })).toBe(true);
      expect(await client.trackPurchase({ transactionId: coded, amount: 1, currency: 'USD', code: acme.code.label })).toBe(true);
      expect(await ledger(bare)).toEqual([expect.objectContaining({ external_user_id: installId, code: null, link: null, resolution_method: 'unattributed' })]);
      expect(await ledger(coded)).toEqual([expect.objectContaining({ external_user_id: installId, code: acme.code.label })]);
      expect(sent).toEqual(['/api/public/attribution/events', '/api/public/attribution/events']);
      expect(logs.some((m) => m.includes('the install is not reported this launch'))).toBe(true);
    } finally {
      globalThis.fetch = realFetch;
    }
  });
});
