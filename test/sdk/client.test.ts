import { afterEach, describe, expect, it, vi } from 'vitest';
import * as sdk from '../../sdk/react-native/src/index';

/** Behaviour the vectors cannot express: timers, globals, the module-level client, bounds. */

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ENDPOINT = 'https://svc.test';
const REPORTED = { svc_install_id: '0b7c6a3e-5d4f-4e2a-9c1b-7f8e6d5c4b3a', svc_install_reported: 'true' };

function memoryStorage(initial: Record<string, string> = {}) {
  const map = new Map(Object.entries(initial));
  return {
    map,
    getItem: async (key: string) => map.get(key) ?? null,
    setItem: async (key: string, value: string) => void map.set(key, value),
  };
}

type Sent = { path: string; body: Record<string, unknown> };
/** Stubs global fetch: `answer` decides each request's answer; answers what was sent. */
function stubFetch(answer: (req: Sent) => Promise<Response> | Response = () => Response.json({ ok: true, duplicate: false })) {
  const sent: Sent[] = [];
  vi.stubGlobal('fetch', async (url: string, init: { body: string }) => {
    const req = { path: new URL(url).pathname, body: JSON.parse(init.body) };
    sent.push(req);
    return answer(req);
  });
  return sent;
}

function client(overrides: Partial<sdk.SvcConfig> & { initial?: Record<string, string> } = {}) {
  const logs: string[] = [];
  const { initial, ...config } = overrides;
  const storage = memoryStorage(initial);
  const c = sdk.createClient({ pixelKey: 'pk_unit', platform: 'ios', endpoint: ENDPOINT, storage, log: (m) => void logs.push(m), ...config });
  return { c, logs, storage };
}

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('module-level API', () => {
  it('getInstallId() before configure throws synchronously; the other calls resolve null or false', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const sent = stubFetch();
    expect(() => sdk.getInstallId()).toThrow(/before configure/);
    await expect(sdk.trackInstall({ readClipboard: true })).resolves.toBeNull();
    await expect(sdk.trackPurchase({ transactionId: 't', amount: 1, currency: 'USD' })).resolves.toBe(false);
    await expect(sdk.getAttribution()).resolves.toBeNull();
    await expect(sdk.wouldReadClipboard()).resolves.toBe(false);
    await expect(sdk.trackOpen('https://maya.link/app')).resolves.toBeNull();
    expect(sent).toEqual([]);
    expect(warn).toHaveBeenCalledTimes(5);
    warn.mockRestore();
  });

  it('configure() returns the default client that the module functions use', async () => {
    const open = { click_token: 'svc_open', deep_link: '/recipes/42', link: { id: 1, domain: 'maya.link', slug: 'app' } };
    const sent = stubFetch((req) =>
      req.path.endsWith('/installs')
        ? Response.json({ ok: true, duplicate: false, install: { install_id: req.body.install_id, deep_link: '/recipes/42' } }, { status: 201 })
        : req.path.endsWith('/opens')
          ? Response.json(open)
          : Response.json({ ok: true, duplicate: false }),
    );
    const storage = memoryStorage();
    const configured = sdk.configure({ pixelKey: 'pk_default', platform: 'android', endpoint: ENDPOINT, storage, clipboard: { getString: async () => '' } });
    const id = await sdk.getInstallId();
    expect(id).toMatch(UUID_V4);
    expect(await configured.getInstallId()).toBe(id);
    expect(await sdk.wouldReadClipboard()).toBe(true);
    expect((await sdk.trackInstall())?.install.install_id).toBe(id);
    expect(await sdk.wouldReadClipboard()).toBe(false);
    expect((await sdk.getAttribution())?.install.deep_link).toBe('/recipes/42');
    expect(await sdk.trackPurchase({ transactionId: 'tx', amount: 1, currency: 'USD' })).toBe(true);
    expect(await sdk.trackOpen('https://maya.link/app')).toEqual(open);
    expect(sent.map((s) => [s.path, s.body.pixel_key, s.body.platform ?? s.body.external_user_id])).toEqual([
      ['/api/public/attribution/installs', 'pk_default', 'android'],
      ['/api/public/attribution/events', 'pk_default', id],
      ['/api/public/attribution/opens', 'pk_default', 'android'],
    ]);
    expect(sent[2]!.body).toEqual({ pixel_key: 'pk_default', url: 'https://maya.link/app', install_id: id, platform: 'android' });
    expect(storage.map.get('svc_install_id')).toBe(id);
  });

  it('exports the default endpoint', () => {
    expect(sdk.DEFAULT_ENDPOINT).toMatch(/^https?:\/\//);
  });
});

describe('install ID', () => {
  it('is a UUID v4 from crypto.getRandomValues, never crypto.randomUUID', async () => {
    const getRandomValues = vi.fn((bytes: Uint8Array) => bytes.fill(0xff));
    const randomUUID = vi.fn(() => {
      throw new Error('randomUUID must not be used');
    });
    vi.stubGlobal('crypto', { getRandomValues, randomUUID });
    const id = await client().c.getInstallId();
    expect(id).toBe('ffffffff-ffff-4fff-bfff-ffffffffffff');
    expect(getRandomValues).toHaveBeenCalledOnce();
    expect(randomUUID).not.toHaveBeenCalled();
  });

  it('falls back to Math.random when there is no crypto, or when getRandomValues throws', () => {
    vi.stubGlobal('crypto', undefined);
    const ids = new Set(Array.from({ length: 200 }, () => sdk.uuidV4()));
    expect(ids.size).toBe(200);
    for (const id of ids) expect(id).toMatch(UUID_V4);
    vi.stubGlobal('crypto', {
      getRandomValues: () => {
        throw new Error('not supported');
      },
    });
    expect(sdk.uuidV4()).toMatch(UUID_V4);
  });
});

describe('timeouts', () => {
  /** A fetch that never answers, and rejects when its signal aborts (as fetch does). */
  function hangingFetch() {
    const signals: { aborted: boolean }[] = [];
    vi.stubGlobal('fetch', (_url: string, init: { signal?: AbortSignal }) => {
      if (init.signal) signals.push(init.signal);
      return new Promise((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));
    });
    return signals;
  }

  it('gives up on a request after 10 s (aborting it), leaves the install pending and logs', async () => {
    vi.useFakeTimers();
    const signals = hangingFetch();
    const { c, logs, storage } = client();
    const result = c.trackInstall();
    await vi.advanceTimersByTimeAsync(9_999);
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(result).resolves.toBeNull();
    expect(signals[0]!.aborted).toBe(true);
    expect(logs.some((m) => m.includes('no answer in 10000 ms'))).toBe(true);
    expect(storage.map.has('svc_install_reported')).toBe(false);
  });

  it('times out without AbortController too', async () => {
    vi.useFakeTimers();
    vi.stubGlobal('AbortController', undefined);
    vi.stubGlobal('fetch', () => new Promise(() => undefined));
    const { c, storage } = client({ initial: REPORTED });
    const result = c.trackPurchase({ transactionId: 'slow', amount: 1, currency: 'USD' });
    await vi.advanceTimersByTimeAsync(10_000);
    await expect(result).resolves.toBe(false);
    expect(JSON.parse(storage.map.get('svc_pending_purchases')!)).toEqual([
      { transaction_id: 'slow', amount: 1, currency: 'USD', occurred_at: expect.stringMatching(/^\d{4}-/) },
    ]);
  });

  it('treats a storage call that never settles as failed after 5 s, and reports no install under an ID it could not keep', async () => {
    vi.useFakeTimers();
    const sent = stubFetch(() => Response.json({ ok: true, duplicate: false, install: {} }, { status: 201 }));
    const hanging = { getItem: () => new Promise<string | null>(() => undefined), setItem: () => new Promise<void>(() => undefined) };
    const { c, logs } = client({ storage: hanging });
    const result = c.trackInstall();
    await vi.advanceTimersByTimeAsync(30_000);
    await expect(result).resolves.toBeNull();
    expect(sent).toHaveLength(0);
    expect(await c.getInstallId()).toMatch(UUID_V4);
    expect(logs.some((m) => m.includes('cannot read svc_install_id'))).toBe(true);
    expect(logs.some((m) => m.includes('the install is not reported this launch'))).toBe(true);
  });

  it('gives up on a clipboard read after 30 s (a paste prompt left unanswered): the install goes without a token, and the purchase made meanwhile right after it', async () => {
    vi.useFakeTimers();
    const sent = stubFetch(({ path }) => Response.json({ ok: true, duplicate: false, ...(path.endsWith('/installs') ? { install: {} } : {}) }, { status: 201 }));
    const { c, logs, storage } = client({ clipboard: { getString: () => new Promise<string>(() => undefined) } });
    const install = c.trackInstall({ readClipboard: true });
    // The purchase waits for the install in storage, and says so at once.
    await expect(c.trackPurchase({ transactionId: 'after-prompt', amount: 2, currency: 'usd' })).resolves.toBe(false);
    expect(JSON.parse(storage.map.get('svc_pending_purchases')!)).toMatchObject([{ transaction_id: 'after-prompt', currency: 'USD' }]);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(sent).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    await expect(install).resolves.toEqual({ ok: true, duplicate: false, install: {} });
    expect(sent.map((r) => r.path)).toEqual(['/api/public/attribution/installs', '/api/public/attribution/events']);
    expect(storage.map.get('svc_pending_purchases')).toBe('[]');
    expect(sent[0]!.body).not.toHaveProperty('clipboard_token');
    expect(logs.some((m) => m.includes('clipboard: cannot read it'))).toBe(true);
  });
});

describe('failures never reach the app', () => {
  it('storage that throws synchronously, a throwing log and a throwing clipboard', async () => {
    const sent = stubFetch(() => Response.json({ ok: true, duplicate: false, install: {} }, { status: 201 }));
    const throwing = {
      getItem: () => {
        throw new Error('sync get');
      },
      setItem: () => {
        throw new Error('sync set');
      },
    };
    const c = sdk.createClient({
      pixelKey: 'pk_unit',
      platform: 'ios',
      endpoint: ENDPOINT,
      storage: throwing as unknown as sdk.StorageAdapter,
      clipboard: { getString: () => Promise.reject(new Error('denied')) },
      log: () => {
        throw new Error('logger down');
      },
    });
    // No install under an ID storage cannot keep; the purchase goes under the launch's ID.
    await expect(c.trackInstall({ readClipboard: true })).resolves.toBeNull();
    expect(await c.trackPurchase({ transactionId: 'tx', amount: 1, currency: 'USD' })).toBe(true);
    expect(sent.map((s) => [s.path, s.body.external_user_id])).toEqual([['/api/public/attribution/events', await c.getInstallId()]]);
  });

  it('a config without pixel key or with another platform sends nothing, logs why, and does not throw', async () => {
    const sent = stubFetch();
    for (const bad of [{ pixelKey: '' }, { platform: 'web' as never }]) {
      const { c, logs } = client(bad);
      expect(await c.trackInstall()).toBeNull();
      expect(await c.trackPurchase({ transactionId: 'tx', amount: 1, currency: 'USD' })).toBe(false);
      expect((await c.getInstallId())).toMatch(UUID_V4);
      expect(logs.length).toBeGreaterThan(0);
    }
    expect(() => sdk.createClient(undefined as never)).not.toThrow();
    expect(sent).toEqual([]);
  });

  it('a purchase without a usable transaction id, amount or currency is not sent', async () => {
    const sent = stubFetch();
    const { c, logs } = client({ initial: REPORTED });
    for (const bad of [
      { transactionId: ' ', amount: 1, currency: 'USD' },
      { transactionId: 'x'.repeat(129), amount: 1, currency: 'USD' },
      { transactionId: 'tx', amount: Number.NaN, currency: 'USD' },
      { transactionId: 'tx', amount: '4.99' as never, currency: 'USD' },
      { transactionId: 'tx', amount: 1, currency: '' },
      undefined as never,
    ]) {
      expect(await c.trackPurchase(bad)).toBe(false);
    }
    expect(sent).toEqual([]);
    expect(logs).toHaveLength(6);
  });
});

describe('purchases', () => {
  it('keeps at most 100 waiting purchases, dropping the oldest (logged)', async () => {
    stubFetch(() => {
      throw new TypeError('Network request failed');
    });
    const { c, logs, storage } = client({ initial: REPORTED });
    for (let i = 1; i <= 101; i++) expect(await c.trackPurchase({ transactionId: `tx-${i}`, amount: i, currency: 'USD' })).toBe(false);
    const queued = JSON.parse(storage.map.get('svc_pending_purchases')!);
    expect(queued).toHaveLength(sdk.PENDING_PURCHASES_LIMIT);
    expect(queued[0].transaction_id).toBe('tx-2');
    expect(queued.at(-1).transaction_id).toBe('tx-101');
    expect(logs.some((m) => m.includes('dropped tx-1'))).toBe(true);
  });

  it('a purchase made while the install is being reported resolves false at once, stored, and is sent right after the install (so it inherits its attribution)', async () => {
    let releaseInstall!: () => void;
    const sent = stubFetch(async (req) => {
      if (req.path.endsWith('/installs')) {
        await new Promise<void>((r) => {
          releaseInstall = r;
        });
        return Response.json({ ok: true, duplicate: false, install: {} }, { status: 201 });
      }
      return Response.json({ ok: true, duplicate: false });
    });
    const { c, storage } = client();
    const install = c.trackInstall();
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    // The install request is in flight: the purchase is stored, not sent.
    expect(await c.trackPurchase({ transactionId: 'early', amount: 3, currency: 'USD' })).toBe(false);
    expect(JSON.parse(storage.map.get('svc_pending_purchases')!)).toMatchObject([{ transaction_id: 'early' }]);
    expect(sent).toHaveLength(1);
    releaseInstall();
    await install;
    expect(sent.map((s) => s.path)).toEqual(['/api/public/attribution/installs', '/api/public/attribution/events']);
    expect(sent[1]!.body.external_user_id).toBe(await c.getInstallId());
    expect(storage.map.get('svc_pending_purchases')).toBe('[]');
    // Reported now: the next purchase goes at once.
    expect(await c.trackPurchase({ transactionId: 'later', amount: 3, currency: 'USD' })).toBe(true);
  });

  it('concurrent purchases each send once, in order', async () => {
    const sent = stubFetch();
    const { c } = client({ initial: REPORTED });
    const results = await Promise.all(['a', 'b', 'c', 'a'].map((transactionId) => c.trackPurchase({ transactionId, amount: 1, currency: 'USD' })));
    expect(results).toEqual([true, true, true, true]);
    expect(sent.map((s) => s.body.transaction_id)).toEqual(['a', 'b', 'c']);
  });

  it('a currency outside USD, CAD, EUR, GBP and AUD is refused: logged, false, nothing stored or sent', async () => {
    const sent = stubFetch();
    const { c, logs, storage } = client();
    for (const currency of ['JPY', 'usd2', 'US D', 'XAU']) expect(await c.trackPurchase({ transactionId: `tx-${currency}`, amount: 1200, currency })).toBe(false);
    expect(sent).toEqual([]);
    expect([...storage.map.keys()]).toEqual([]);
    expect(logs.filter((m) => m.includes('convert it first'))).toHaveLength(4);
    expect(sdk.CURRENCIES).toEqual(['USD', 'CAD', 'EUR', 'GBP', 'AUD']);
  });

  it('an app that never calls trackInstall keeps its purchases waiting, up to the bound (logged)', async () => {
    const sent = stubFetch();
    const { c, logs, storage } = client();
    expect(await c.trackPurchase({ transactionId: 'waiting', amount: 1, currency: 'CAD' })).toBe(false);
    expect(sent).toEqual([]);
    expect(JSON.parse(storage.map.get('svc_pending_purchases')!)).toHaveLength(1);
    expect(logs.some((m) => m.includes('waits for the install'))).toBe(true);
  });
});

describe('clipboard, attribution and opens', () => {
  it('a hasString that fails or never answers means no read (no paste prompt), logged', async () => {
    vi.useFakeTimers();
    stubFetch(() => Response.json({ ok: true, duplicate: false, install: {} }, { status: 201 }));
    const getString = vi.fn(async () => 'svc_token');
    const failing = client({ clipboard: { getString, hasString: () => Promise.reject(new Error('denied')) } });
    expect(await failing.c.wouldReadClipboard()).toBe(false);
    await failing.c.trackInstall({ readClipboard: true });
    const hanging = client({ clipboard: { getString, hasString: () => new Promise<boolean>(() => undefined) } });
    const would = hanging.c.wouldReadClipboard();
    await vi.advanceTimersByTimeAsync(sdk.CLIPBOARD_TIMEOUT_MS);
    await expect(would).resolves.toBe(false);
    expect(getString).not.toHaveBeenCalled();
    expect(failing.logs.some((m) => m.includes('cannot ask whether it holds text'))).toBe(true);
  });

  it('getAttribution waits for an install being reported, and is null for a stored answer that is not an install answer', async () => {
    let release!: () => void;
    stubFetch(async () => {
      await new Promise<void>((r) => {
        release = r;
      });
      return Response.json({ ok: true, duplicate: false, install: { deep_link: '/x' } }, { status: 201 });
    });
    const { c } = client();
    const install = c.trackInstall();
    const attribution = c.getAttribution();
    await vi.waitFor(() => expect(release).toBeTypeOf('function'));
    release();
    expect(await attribution).toEqual({ ok: true, duplicate: false, install: { deep_link: '/x' } });
    await install;
    const broken = client({ initial: { ...REPORTED, svc_install_answer: '{"ok":true}' } });
    expect(await broken.c.getAttribution()).toBeNull();
    const garbage = client({ initial: { ...REPORTED, svc_install_answer: '<html>' } });
    expect(await garbage.c.getAttribution()).toBeNull();
  });

  it('trackOpen never rejects: a blank url, no fetch, a request that never answers (10 s) all resolve null, and nothing is stored', async () => {
    const { c, storage } = client({ initial: REPORTED });
    expect(await c.trackOpen('  ')).toBeNull();
    vi.stubGlobal('fetch', undefined);
    expect(await c.trackOpen('https://maya.link/app')).toBeNull();
    vi.useFakeTimers();
    vi.stubGlobal('fetch', () => new Promise(() => undefined));
    const open = c.trackOpen('https://maya.link/app');
    await vi.advanceTimersByTimeAsync(sdk.REQUEST_TIMEOUT_MS);
    await expect(open).resolves.toBeNull();
    expect(Object.fromEntries(storage.map)).toEqual(REPORTED);
  });
});
