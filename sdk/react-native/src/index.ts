/**
 * @svc/react-native: credits an app's installs and purchases to the creator link or code that
 * brought the user (SPEC 4.6, CONTRACT 11). No dependencies: it uses the platform's `fetch`,
 * the storage adapter and the optional clipboard reader it is given, and nothing else.
 *
 * One file on purpose: it loads as it is under Metro, tsx, Node's type stripping or a bundler.
 */

export type Platform = 'ios' | 'android';

/** AsyncStorage's shape: any object with these two methods works. */
export interface StorageAdapter {
  getItem(key: string): Promise<string | null>;
  setItem(key: string, value: string): Promise<void>;
}

/** `@react-native-clipboard/clipboard`'s shape. */
export interface ClipboardReader {
  getString(): Promise<string>;
}

export interface SvcConfig {
  /** The brand's public pixel key, `pk_…`. */
  pixelKey: string;
  platform: Platform;
  storage: StorageAdapter;
  /** Without it the SDK never reads the clipboard. */
  clipboard?: ClipboardReader;
  appVersion?: string;
  /** The service's base URL; default DEFAULT_ENDPOINT. */
  endpoint?: string;
  /** Accepted, but the events endpoint has no sandbox flag: purchases are recorded as live revenue. */
  sandbox?: boolean;
  /** Every failure the SDK contains is reported here, never thrown. */
  log?: (message: string, error?: unknown) => void;
}

export interface TrackInstallOptions {
  /** May the SDK read the clipboard for a click token (`svc_…`)? Default false. */
  readClipboard?: boolean;
  /** A creator code the user typed. */
  code?: string;
}

export interface PurchaseInput {
  /** The store's transaction ID: the deduplication key. At most 128 characters. */
  transactionId: string;
  /** Major units, e.g. 4.99. */
  amount: number;
  /** USD, CAD, EUR, GBP or AUD (the service records any other as USD). */
  currency: string;
  code?: string;
}

/** The service's answer to an install (SPEC 4.2). */
export interface InstallAnswer {
  ok: boolean;
  duplicate: boolean;
  install: {
    install_id: string;
    platform: Platform;
    attributed: boolean;
    resolution_method: 'clipboard' | 'code' | 'ip' | 'unattributed';
    confidence: number;
    link: { id: number; domain: string; slug: string } | null;
    code: string | null;
    creator: { id: string; name: string } | null;
  };
}

export interface SvcClient {
  /** The install's answer, or null when nothing was sent (already reported, or storage cannot keep the install ID) or sending failed. Never rejects. */
  trackInstall(options?: TrackInstallOptions): Promise<InstallAnswer | null>;
  /** True once the service has the purchase (now or before), false otherwise. Never rejects. */
  trackPurchase(purchase: PurchaseInput): Promise<boolean>;
  /** The install ID (a UUID v4), kept in storage; for this launch only when storage cannot keep it. Never rejects. */
  getInstallId(): Promise<string>;
}

/** The deployment's public URL, written into `dist/` by `npm pack` from PUBLIC_BASE_URL. */
export const DEFAULT_ENDPOINT: string = 'http://127.0.0.1:3000';

/** Storage keys (the same in every SDK, see sdk/vectors/README.md). */
export const STORAGE_KEYS = {
  installId: 'svc_install_id',
  installReported: 'svc_install_reported',
  pendingPurchases: 'svc_pending_purchases',
  pendingInstall: 'svc_pending_install',
} as const;

/** Purchases kept for a later send; past it the oldest is dropped (and logged). */
export const PENDING_PURCHASES_LIMIT = 100;
export const REQUEST_TIMEOUT_MS = 10_000;
/** A storage call that has not settled by then counts as failed. */
export const STORAGE_TIMEOUT_MS = 5_000;
/**
 * A clipboard read that has not settled by then gives no token. Longer than storage's: the
 * system's paste prompt waits for the user, and until the read ends the install (and any purchase) waits.
 */
export const CLIPBOARD_TIMEOUT_MS = 30_000;

/** A click token's shape (`svc_` and base64url): clipboard text that merely starts with `svc_` stays on the device. */
const CLICK_TOKEN = /^svc_[A-Za-z0-9_-]+$/;
const INSTALLS_PATH = '/api/public/attribution/installs';
const EVENTS_PATH = '/api/public/attribution/events';
const MAX_TRANSACTION_ID = 128;

/** A purchase as kept in `svc_pending_purchases` (a JSON array of these). */
interface PendingPurchase {
  transaction_id: string;
  amount: number;
  currency: string;
  code?: string;
  occurred_at: string;
}

/** An install that could not be sent yet, as kept in `svc_pending_install` ("" once sent). */
interface PendingInstall {
  occurred_at: string;
  clipboard_token?: string;
  code?: string;
}

// The globals the SDK uses, typed here so that it builds without DOM or Node types.
type FetchAnswer = { status: number; text(): Promise<string> };
type FetchInit = { method: string; headers: Record<string, string>; body: string; signal?: unknown };
type Globals = {
  fetch?: (url: string, init: FetchInit) => Promise<FetchAnswer>;
  AbortController?: new () => { signal: unknown; abort(): void };
  crypto?: { getRandomValues?: (bytes: Uint8Array) => Uint8Array };
  setTimeout: (fn: () => void, ms: number) => unknown;
  clearTimeout: (id: unknown) => void;
  console?: { warn?: (...args: unknown[]) => void };
};
const globals = globalThis as unknown as Globals;

/** Outcome of one request: delivered (with the answer), pending (retry later) or refused (drop). */
type Sent = { kind: 'ok'; status: number; body: unknown } | { kind: 'retry' } | { kind: 'drop' };

/** A UUID v4 from crypto.getRandomValues when the platform has it (crypto.randomUUID is not relied on). */
export function uuidV4(): string {
  const bytes = new Uint8Array(16);
  let filled = false;
  try {
    if (typeof globals.crypto?.getRandomValues === 'function') {
      globals.crypto.getRandomValues(bytes);
      filled = true;
    }
  } catch {
    // Some polyfills define getRandomValues and throw: fall back below.
  }
  if (!filled) for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const trimmed = (value: unknown): string | undefined => {
  if (typeof value !== 'string') return undefined;
  const t = value.trim();
  return t === '' ? undefined : t;
};

/** Settles as `work`, or as `onTimeout()` (its value, or its throw) after `ms`; the timer is cleared either way. */
async function within<T>(work: Promise<T>, ms: number, onTimeout: () => T): Promise<T> {
  let timer: unknown;
  const timeout = new Promise<T>((resolve, reject) => {
    timer = globals.setTimeout(() => {
      try {
        resolve(onTimeout());
      } catch (error) {
        reject(error);
      }
    }, ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    globals.clearTimeout(timer);
  }
}

/** Checks the configuration; answers why it cannot send, or null. */
function configProblem(config: SvcConfig): string | null {
  if (!config || typeof config !== 'object') return 'configure() needs a config object';
  if (!trimmed(config.pixelKey)) return 'pixelKey is required';
  if (config.platform !== 'ios' && config.platform !== 'android') return 'platform must be "ios" or "android"';
  return null;
}

function endpointOf(config: SvcConfig): string {
  const endpoint = trimmed(config?.endpoint) ?? DEFAULT_ENDPOINT;
  return endpoint.replace(/\/+$/, '');
}

/** Makes a client independent of the default one (own storage reads, own in-flight state). */
export function createClient(config: SvcConfig): SvcClient {
  const problem = configProblem(config);
  const endpoint = endpointOf(config);
  const userLog = typeof config?.log === 'function' ? config.log : undefined;
  const log = (message: string, error?: unknown) => {
    try {
      userLog?.(`svc: ${message}`, error);
    } catch {
      // The app's logger failing must not reach the app either.
    }
  };
  if (problem) log(`${problem}; nothing will be sent`);
  if (config?.sandbox) log('sandbox: the events endpoint has no sandbox flag, so purchases are recorded as live revenue');

  // Keys whose read failed are never written by this client: a stored value it could not see
  // (the real install ID, waiting purchases) must not be overwritten.
  const unreadable = new Set<string>();

  async function readKey(key: string): Promise<string | null> {
    try {
      const value = await within<unknown>(Promise.resolve(config.storage.getItem(key)), STORAGE_TIMEOUT_MS, () => {
        throw new Error(`storage getItem timed out after ${STORAGE_TIMEOUT_MS} ms`);
      });
      return typeof value === 'string' ? value : null;
    } catch (error) {
      unreadable.add(key);
      log(`storage: cannot read ${key}`, error);
      return null;
    }
  }

  /** Stores `value`; false when it was not stored (storage failed, or the key was unreadable). */
  async function writeKey(key: string, value: string): Promise<boolean> {
    if (unreadable.has(key)) return false;
    try {
      await within<unknown>(Promise.resolve(config.storage.setItem(key, value)), STORAGE_TIMEOUT_MS, () => {
        throw new Error(`storage setItem timed out after ${STORAGE_TIMEOUT_MS} ms`);
      });
      return true;
    } catch (error) {
      log(`storage: cannot write ${key}`, error);
      return false;
    }
  }

  // The install ID, and whether storage holds it (read from it, or written to it this launch).
  let identity: Promise<{ id: string; kept: boolean }> | undefined;
  function installIdentity(): Promise<{ id: string; kept: boolean }> {
    identity ??= (async () => {
      const stored = trimmed(await readKey(STORAGE_KEYS.installId));
      if (stored) return { id: stored, kept: true };
      const made = uuidV4();
      return { id: made, kept: await writeKey(STORAGE_KEYS.installId, made) };
    })();
    return identity;
  }
  const getInstallId = async (): Promise<string> => (await installIdentity()).id;

  async function post(path: string, body: Record<string, unknown>): Promise<Sent> {
    const fetch = globals.fetch;
    if (typeof fetch !== 'function') {
      log('no global fetch: kept for a later launch');
      return { kind: 'retry' };
    }
    const Abort = globals.AbortController;
    const controller = typeof Abort === 'function' ? new Abort() : undefined;
    const request = (async (): Promise<Sent> => {
      const res = await fetch(`${endpoint}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
        ...(controller ? { signal: controller.signal } : {}),
      });
      const text = await res.text();
      if (res.status >= 200 && res.status < 300) {
        try {
          return { kind: 'ok', status: res.status, body: JSON.parse(text) };
        } catch (error) {
          // Sending again is safe: the service deduplicates installs and transactions.
          log(`${path}: unreadable ${res.status} answer; kept for a later launch`, error);
          return { kind: 'retry' };
        }
      }
      if (res.status === 429 || res.status >= 500) {
        log(`${path}: HTTP ${res.status}; kept for a later launch`);
        return { kind: 'retry' };
      }
      log(`${path}: refused with HTTP ${res.status} ${text.slice(0, 200)}; not sent again`);
      return { kind: 'drop' };
    })();
    try {
      return await within(request, REQUEST_TIMEOUT_MS, (): Sent => {
        controller?.abort();
        log(`${path}: no answer in ${REQUEST_TIMEOUT_MS} ms; kept for a later launch`);
        return { kind: 'retry' };
      });
    } catch (error) {
      log(`${path}: network error; kept for a later launch`, error);
      return { kind: 'retry' };
    } finally {
      // A request that lost the race to the timer must not surface as an unhandled rejection.
      request.catch(() => undefined);
    }
  }

  // Purchases waiting to be sent, loaded once; `storedQueue` is the JSON storage holds.
  let queue: PendingPurchase[] | undefined;
  let storedQueue: string | null = null;
  async function loadQueue(): Promise<PendingPurchase[]> {
    if (queue) return queue;
    storedQueue = await readKey(STORAGE_KEYS.pendingPurchases);
    queue = [];
    if (storedQueue !== null) {
      try {
        const parsed: unknown = JSON.parse(storedQueue);
        if (Array.isArray(parsed)) queue = parsed.filter(isPendingPurchase);
      } catch (error) {
        log(`storage: ${STORAGE_KEYS.pendingPurchases} is not JSON; starting an empty queue`, error);
      }
    }
    return queue;
  }

  /** Sends the queue in order; stops at the first purchase the service could not take now. */
  async function flushQueue(): Promise<Set<string>> {
    const delivered = new Set<string>();
    const pending = await loadQueue();
    while (pending.length > 0) {
      const item = pending[0]!;
      const outcome = await post(EVENTS_PATH, {
        pixel_key: config.pixelKey,
        event_type: 'purchase',
        source: 'sdk',
        transaction_id: item.transaction_id,
        external_user_id: await getInstallId(),
        amount: item.amount,
        currency: item.currency,
        ...(item.code ? { code: item.code } : {}),
        occurred_at: item.occurred_at,
      });
      if (outcome.kind === 'retry') break;
      pending.shift();
      if (outcome.kind === 'ok') delivered.add(item.transaction_id);
    }
    const json = JSON.stringify(pending);
    if (json !== (storedQueue ?? '[]')) {
      await writeKey(STORAGE_KEYS.pendingPurchases, json);
      storedQueue = json;
    }
    return delivered;
  }

  // Purchase sends run one after another, so a queued purchase is never sent by two calls at once.
  let purchaseChain: Promise<unknown> = Promise.resolve();
  function serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = purchaseChain.then(work, work);
    purchaseChain = run.catch(() => undefined);
    return run;
  }

  let reported = false;
  let installFlight: Promise<InstallAnswer | null> | undefined;

  /** Known reported (in memory, or in storage: any value counts). */
  async function isReported(): Promise<boolean> {
    if (!reported && (await readKey(STORAGE_KEYS.installReported)) !== null) reported = true;
    return reported;
  }

  async function reportInstall(options: TrackInstallOptions): Promise<InstallAnswer | null> {
    if (await isReported()) return null;
    const { id, kept } = await installIdentity();
    // Under an ID that storage does not hold, the next launch would report the install again
    // under a new ID and it would count twice (also when a stored ID merely failed to read now).
    if (!kept) {
      log('storage cannot hold the install ID: the install is not reported this launch');
      return null;
    }
    // An install that failed before is sent again as first tried: its time, token and code.
    const storedPending = await readKey(STORAGE_KEYS.pendingInstall);
    const before = parsePendingInstall(storedPending);
    let clipboardToken = before?.clipboard_token;
    if (!clipboardToken && options.readClipboard === true && config.clipboard && typeof config.clipboard.getString === 'function') {
      try {
        const read = Promise.resolve(config.clipboard.getString());
        const text = trimmed(
          await within<unknown>(read, CLIPBOARD_TIMEOUT_MS, () => {
            throw new Error(`clipboard getString timed out after ${CLIPBOARD_TIMEOUT_MS} ms`);
          }),
        );
        // Anything but a click token stays on the device: it is never sent nor logged.
        if (text && CLICK_TOKEN.test(text)) clipboardToken = text;
      } catch (error) {
        log('clipboard: cannot read it', error);
      }
    }
    const code = trimmed(options.code) ?? before?.code;
    const pending: PendingInstall = {
      occurred_at: before?.occurred_at ?? new Date().toISOString(),
      ...(clipboardToken ? { clipboard_token: clipboardToken } : {}),
      ...(code ? { code } : {}),
    };
    const appVersion = trimmed(config.appVersion);
    const outcome = await post(INSTALLS_PATH, {
      pixel_key: config.pixelKey,
      install_id: id,
      platform: config.platform,
      ...(appVersion ? { app_version: appVersion } : {}),
      occurred_at: pending.occurred_at,
      ...(pending.clipboard_token ? { clipboard_token: pending.clipboard_token } : {}),
      ...(pending.code ? { code: pending.code } : {}),
    });
    if (outcome.kind === 'retry') {
      const json = JSON.stringify(pending);
      if (json !== storedPending) await writeKey(STORAGE_KEYS.pendingInstall, json);
      return null;
    }
    // Reported, or refused for good (a wrong pixel key): either way it is never sent again.
    reported = true;
    await writeKey(STORAGE_KEYS.installReported, 'true');
    if (storedPending) await writeKey(STORAGE_KEYS.pendingInstall, '');
    return outcome.kind === 'ok' && isInstallAnswer(outcome.body) ? outcome.body : null;
  }

  /** True when an earlier trackInstall could not send the install (it waits in storage). */
  async function installPending(): Promise<boolean> {
    return !(await isReported()) && parsePendingInstall(await readKey(STORAGE_KEYS.pendingInstall)) !== null;
  }

  function trackInstall(options?: TrackInstallOptions): Promise<InstallAnswer | null> {
    if (problem) {
      log(`trackInstall: ${problem}`);
      return Promise.resolve(null);
    }
    installFlight ??= (async () => {
      try {
        const answer = await reportInstall(options && typeof options === 'object' ? options : {});
        // Waiting purchases go after the install, so that they can inherit its attribution.
        if (reported) await serialized(flushQueue);
        return answer;
      } catch (error) {
        log('trackInstall failed', error);
        return null;
      } finally {
        installFlight = undefined;
      }
    })();
    return installFlight;
  }

  async function trackPurchase(purchase: PurchaseInput): Promise<boolean> {
    if (problem) {
      log(`trackPurchase: ${problem}`);
      return false;
    }
    try {
      const transactionId = trimmed(purchase?.transactionId);
      const currency = trimmed(purchase?.currency);
      const amount = purchase?.amount;
      if (!transactionId || transactionId.length > MAX_TRANSACTION_ID) {
        log(`trackPurchase: transactionId must be 1 to ${MAX_TRANSACTION_ID} characters; not sent`);
        return false;
      }
      if (typeof amount !== 'number' || !Number.isFinite(amount)) {
        log('trackPurchase: amount must be a finite number; not sent');
        return false;
      }
      if (!currency) {
        log('trackPurchase: currency is required; not sent');
        return false;
      }
      const code = trimmed(purchase.code);
      // An install being reported, or left pending by an earlier launch, goes first: the
      // purchase can then inherit its attribution.
      if (installFlight) await installFlight;
      else if (await installPending()) await trackInstall();
      return await serialized(async () => {
        const pending = await loadQueue();
        if (!pending.some((p) => p.transaction_id === transactionId)) {
          pending.push({ transaction_id: transactionId, amount, currency, ...(code ? { code } : {}), occurred_at: new Date().toISOString() });
          while (pending.length > PENDING_PURCHASES_LIMIT) {
            const dropped = pending.shift()!;
            log(`more than ${PENDING_PURCHASES_LIMIT} purchases waiting: dropped ${dropped.transaction_id}`);
          }
        }
        return (await flushQueue()).has(transactionId);
      });
    } catch (error) {
      log('trackPurchase failed', error);
      return false;
    }
  }

  return {
    trackInstall,
    trackPurchase,
    // Never rejects: storage failures end in an ID kept in memory for this launch.
    getInstallId,
  };
}

function isPendingPurchase(value: unknown): value is PendingPurchase {
  const p = value as PendingPurchase;
  return (
    typeof p === 'object' &&
    p !== null &&
    typeof p.transaction_id === 'string' &&
    typeof p.amount === 'number' &&
    typeof p.currency === 'string' &&
    typeof p.occurred_at === 'string'
  );
}

function parsePendingInstall(stored: string | null): PendingInstall | null {
  if (!stored) return null;
  try {
    const p = JSON.parse(stored) as PendingInstall;
    const optional = (v: unknown) => v === undefined || typeof v === 'string';
    if (typeof p === 'object' && p !== null && typeof p.occurred_at === 'string' && optional(p.clipboard_token) && optional(p.code)) return p;
  } catch {
    // Not ours: the install is sent as if for the first time.
  }
  return null;
}

function isInstallAnswer(value: unknown): value is InstallAnswer {
  const a = value as InstallAnswer;
  return typeof a === 'object' && a !== null && typeof a.ok === 'boolean' && typeof a.install === 'object';
}

let defaultClient: SvcClient | undefined;

/** Sets up the default client (call once at app start) and answers it. */
export function configure(config: SvcConfig): SvcClient {
  defaultClient = createClient(config);
  return defaultClient;
}

const notConfigured = (what: string) => {
  try {
    globals.console?.warn?.(`svc: ${what} before configure(): nothing sent`);
  } catch {
    // A missing console must not break the app.
  }
};

export function trackInstall(options?: TrackInstallOptions): Promise<InstallAnswer | null> {
  if (!defaultClient) {
    notConfigured('trackInstall');
    return Promise.resolve(null);
  }
  return defaultClient.trackInstall(options);
}

export function trackPurchase(purchase: PurchaseInput): Promise<boolean> {
  if (!defaultClient) {
    notConfigured('trackPurchase');
    return Promise.resolve(false);
  }
  return defaultClient.trackPurchase(purchase);
}

/** The install ID of the default client. Throws (synchronously) before configure(): a programming error. */
export function getInstallId(): Promise<string> {
  if (!defaultClient) throw new Error('svc: getInstallId() called before configure()');
  return defaultClient.getInstallId();
}
