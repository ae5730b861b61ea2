/**
 * @svc/react-native: credits an app's installs and purchases to the creator link or code that
 * brought the user, and tells the app where that link pointed (docs/sdk.md). No dependencies: it
 * uses the platform's `fetch`, the storage adapter and the optional clipboard reader it is given.
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
  /** Asked before every read when present: it shows no paste prompt, and an empty clipboard is then never read. */
  hasString?(): Promise<boolean>;
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
  /**
   * Text the user pasted (a paste button shows no prompt), used in place of a clipboard read:
   * sent only when it is a click token. `null` when they chose not to paste.
   */
  pastedText?: string | null;
}

export interface PurchaseInput {
  /** The store's transaction ID: the deduplication key. At most 128 characters. */
  transactionId: string;
  /** Major units, e.g. 4.99. */
  amount: number;
  /** USD, CAD, EUR, GBP or AUD (trimmed, any case). Any other is refused: convert first, or report through a billing connection. */
  currency: string;
  code?: string;
}

/** The service's answer to an install (docs/api.md, POST /installs), as it answered it. */
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
    /** Where the creator's link points inside the app (a path such as `/recipes/42`, or a URL), or null. */
    deep_link?: string | null;
  };
}

/** The service's answer to an open (`trackOpen`): the click it recorded and the link's deep link. */
export interface OpenAnswer {
  click_token: string;
  deep_link: string | null;
  link: { id: number; domain: string; slug: string };
}

export interface SvcClient {
  /** The install's answer, or null when nothing was sent (already reported, or storage cannot keep the install ID) or sending failed. Never rejects. */
  trackInstall(options?: TrackInstallOptions): Promise<InstallAnswer | null>;
  /** True once the service has the purchase (now or before), false otherwise (false at once while the install is not reported: it waits). Never rejects. */
  trackPurchase(purchase: PurchaseInput): Promise<boolean>;
  /** The install ID (a UUID v4), kept in storage; for this launch only when storage cannot keep it. Never rejects. */
  getInstallId(): Promise<string>;
  /** The install answer kept from the report (at this launch or an earlier one), or null. Never sends anything. */
  getAttribution(): Promise<InstallAnswer | null>;
  /** True when `trackInstall({readClipboard: true})` would read the clipboard now (asking shows no prompt). */
  wouldReadClipboard(): Promise<boolean>;
  /** Reports that the app was opened with a creator link's URL; its answer, or null on any failure. Not retried. */
  trackOpen(url: string): Promise<OpenAnswer | null>;
}

/** The deployment's public URL, written into `dist/` by `npm pack` from PUBLIC_BASE_URL. */
export const DEFAULT_ENDPOINT: string = 'http://127.0.0.1:3000';

/** Storage keys (the same in every SDK, see sdk/vectors/README.md). */
export const STORAGE_KEYS = {
  installId: 'svc_install_id',
  installReported: 'svc_install_reported',
  installAnswer: 'svc_install_answer',
  pendingPurchases: 'svc_pending_purchases',
  pendingInstall: 'svc_pending_install',
} as const;

/** The currencies the service books; it would book any other as USD, so the SDK refuses it. */
export const CURRENCIES: readonly string[] = ['USD', 'CAD', 'EUR', 'GBP', 'AUD'];

/** Purchases kept for a later send; past it the oldest is dropped (and logged). */
export const PENDING_PURCHASES_LIMIT = 100;
export const REQUEST_TIMEOUT_MS = 10_000;
/** A storage call that has not settled by then counts as failed. */
export const STORAGE_TIMEOUT_MS = 5_000;
/**
 * A clipboard read that has not settled by then gives no token. Longer than storage's: the
 * system's paste prompt waits for the user, and until the read ends the install waits.
 */
export const CLIPBOARD_TIMEOUT_MS = 30_000;

/** A click token's shape (`svc_` and base64url): clipboard text that merely starts with `svc_` stays on the device. */
const CLICK_TOKEN = /^svc_[A-Za-z0-9_-]+$/;
const INSTALLS_PATH = '/api/public/attribution/installs';
const EVENTS_PATH = '/api/public/attribution/events';
const OPENS_PATH = '/api/public/attribution/opens';
const MAX_TRANSACTION_ID = 128;
/** Only these answers say the request itself is wrong: the work is dropped. Any other failure keeps it. */
const DROPPED_STATUSES = new Set([400, 403, 413, 422]);

/** A purchase as kept in `svc_pending_purchases` (a JSON array of these). */
interface PendingPurchase {
  transaction_id: string;
  amount: number;
  currency: string;
  code?: string;
  occurred_at: string;
}

/** An install that is being sent or could not be sent yet, as kept in `svc_pending_install` ("" once sent). */
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

/** Outcome of one request: delivered (the service's answer and its text), pending (retry later) or refused (drop). */
type Sent = { kind: 'ok'; status: number; body: unknown; text: string } | { kind: 'retry' } | { kind: 'drop' };

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

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The service's install answer: an object with a boolean `ok` and an `install` object (a gateway's `{}` is not). */
function isInstallAnswer(value: unknown): value is InstallAnswer {
  return isObject(value) && typeof value.ok === 'boolean' && isObject(value.install);
}

/** The service's event answer: an object with a boolean `ok`. */
function isEventAnswer(value: unknown): boolean {
  return isObject(value) && typeof value.ok === 'boolean';
}

function isOpenAnswer(value: unknown): value is OpenAnswer {
  return isObject(value) && typeof value.click_token === 'string' && isObject(value.link);
}

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

  /**
   * Posts `body`. Only 400, 403, 413 and 422 drop the work; a network error, a timeout and any
   * other status keep it, and so does a 2xx whose body `isAnswer` does not accept (a captive
   * portal's page, a gateway's `{}`): sending again is safe, the service deduplicates.
   */
  async function post(path: string, body: Record<string, unknown>, isAnswer: (body: unknown) => boolean): Promise<Sent> {
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
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        if (isAnswer(parsed)) return { kind: 'ok', status: res.status, body: parsed, text };
        log(`${path}: HTTP ${res.status} but not the service's answer (${text.slice(0, 100)}); kept for a later launch`);
        return { kind: 'retry' };
      }
      if (DROPPED_STATUSES.has(res.status)) {
        log(`${path}: refused with HTTP ${res.status} ${text.slice(0, 200)}; not sent again`);
        return { kind: 'drop' };
      }
      log(`${path}: HTTP ${res.status}; kept for a later launch`);
      return { kind: 'retry' };
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

  // Purchases waiting to be sent, loaded once and shared by every call of this client.
  let queueLoad: Promise<PendingPurchase[]> | undefined;
  let storedQueue: string | null = null;
  function loadQueue(): Promise<PendingPurchase[]> {
    queueLoad ??= (async () => {
      storedQueue = await readKey(STORAGE_KEYS.pendingPurchases);
      if (storedQueue === null) return [];
      try {
        const parsed: unknown = JSON.parse(storedQueue);
        if (Array.isArray(parsed)) return parsed.filter(isPendingPurchase);
      } catch (error) {
        log(`storage: ${STORAGE_KEYS.pendingPurchases} is not JSON; starting an empty queue`, error);
      }
      return [];
    })();
    return queueLoad;
  }

  // Queue writes run one after another, each writing the queue as it is then: the last one stored
  // is always the latest queue, however the calls interleave.
  let queueWrites: Promise<boolean> = Promise.resolve(true);
  function saveQueue(): Promise<boolean> {
    const run = queueWrites.then(async () => {
      const json = JSON.stringify(await loadQueue());
      if (json === (storedQueue ?? '[]')) return true;
      const stored = await writeKey(STORAGE_KEYS.pendingPurchases, json);
      if (stored) storedQueue = json;
      return stored;
    });
    queueWrites = run.catch(() => false);
    return run;
  }

  // What the service answered per transaction at this launch: true it has it, false it refused it.
  const outcomes = new Map<string, boolean>();

  /** Adds a purchase to the queue (once per transaction ID) and stores the queue; false when storage could not keep it. */
  async function enqueue(purchase: PendingPurchase): Promise<boolean> {
    const pending = await loadQueue();
    outcomes.delete(purchase.transaction_id);
    if (!pending.some((p) => p.transaction_id === purchase.transaction_id)) {
      pending.push(purchase);
      while (pending.length > PENDING_PURCHASES_LIMIT) {
        const dropped = pending.shift()!;
        log(`more than ${PENDING_PURCHASES_LIMIT} purchases waiting: dropped ${dropped.transaction_id}`);
      }
    }
    return saveQueue();
  }

  /** Sends the queue in order, each purchase removed once the service has it or refuses it; stops at the first it could not take now. */
  async function flushQueue(): Promise<void> {
    const pending = await loadQueue();
    while (pending.length > 0) {
      const item = pending[0]!;
      const currency = normalCurrency(item.currency);
      let outcome: Sent;
      if (!currency) {
        // Left by an earlier version: the service would book it as USD.
        log(`purchase ${item.transaction_id}: currency ${JSON.stringify(item.currency)} is not one the service books; dropped`);
        outcome = { kind: 'drop' };
      } else {
        outcome = await post(
          EVENTS_PATH,
          {
            pixel_key: config.pixelKey,
            event_type: 'purchase',
            source: 'sdk',
            transaction_id: item.transaction_id,
            external_user_id: await getInstallId(),
            amount: item.amount,
            currency,
            ...(item.code ? { code: item.code } : {}),
            occurred_at: item.occurred_at,
          },
          isEventAnswer,
        );
      }
      if (outcome.kind === 'retry') break;
      const at = pending.indexOf(item);
      if (at >= 0) pending.splice(at, 1);
      outcomes.set(item.transaction_id, outcome.kind === 'ok');
      await saveQueue();
    }
    await saveQueue();
  }

  // Queue sends run one after another, so a queued purchase is never sent by two calls at once.
  let sendChain: Promise<unknown> = Promise.resolve();
  function sendQueue(): Promise<void> {
    const run = sendChain.then(flushQueue, flushQueue);
    sendChain = run.catch(() => undefined);
    return run;
  }

  let reported = false;
  let answer: InstallAnswer | null = null;
  let installFlight: Promise<InstallAnswer | null> | undefined;

  /** Known reported (in memory, or in storage: any value counts). */
  async function isReported(): Promise<boolean> {
    if (!reported && (await readKey(STORAGE_KEYS.installReported)) !== null) reported = true;
    return reported;
  }

  /** Asks the clipboard's `hasString` when it has one (no prompt); false when it fails. */
  async function clipboardHasText(clipboard: ClipboardReader): Promise<boolean> {
    if (typeof clipboard.hasString !== 'function') return true;
    try {
      const has = await within<unknown>(Promise.resolve(clipboard.hasString()), CLIPBOARD_TIMEOUT_MS, () => {
        throw new Error(`clipboard hasString timed out after ${CLIPBOARD_TIMEOUT_MS} ms`);
      });
      return has === true;
    } catch (error) {
      log('clipboard: cannot ask whether it holds text', error);
      return false;
    }
  }

  /** The click token on the clipboard, if any; an empty clipboard (per `hasString`) is never read. */
  async function clipboardToken(): Promise<string | undefined> {
    const clipboard = config.clipboard;
    if (!clipboard || typeof clipboard.getString !== 'function') return undefined;
    if (!(await clipboardHasText(clipboard))) return undefined;
    try {
      const text = trimmed(
        await within<unknown>(Promise.resolve(clipboard.getString()), CLIPBOARD_TIMEOUT_MS, () => {
          throw new Error(`clipboard getString timed out after ${CLIPBOARD_TIMEOUT_MS} ms`);
        }),
      );
      // Anything but a click token stays on the device: it is never sent nor logged.
      return text && CLICK_TOKEN.test(text) ? text : undefined;
    } catch (error) {
      log('clipboard: cannot read it', error);
      return undefined;
    }
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
    // An install tried before is sent again as first tried: its time, token and code.
    const storedPending = await readKey(STORAGE_KEYS.pendingInstall);
    const before = parsePendingInstall(storedPending);
    let token = before?.clipboard_token;
    if (!token) {
      if ('pastedText' in options) {
        const text = trimmed(options.pastedText);
        // What the user pasted is used only when it is a click token; anything else stays here.
        if (text && CLICK_TOKEN.test(text)) token = text;
      } else if (options.readClipboard === true) {
        token = await clipboardToken();
      }
    }
    const code = trimmed(options.code) ?? before?.code;
    const pending: PendingInstall = {
      occurred_at: before?.occurred_at ?? new Date().toISOString(),
      ...(token ? { clipboard_token: token } : {}),
      ...(code ? { code } : {}),
    };
    // Stored before it is sent: an app killed mid-request still has its click token next launch.
    const json = JSON.stringify(pending);
    if (json !== storedPending) await writeKey(STORAGE_KEYS.pendingInstall, json);
    const appVersion = trimmed(config.appVersion);
    const outcome = await post(
      INSTALLS_PATH,
      {
        pixel_key: config.pixelKey,
        install_id: id,
        platform: config.platform,
        ...(appVersion ? { app_version: appVersion } : {}),
        occurred_at: pending.occurred_at,
        ...(pending.clipboard_token ? { clipboard_token: pending.clipboard_token } : {}),
        ...(pending.code ? { code: pending.code } : {}),
      },
      isInstallAnswer,
    );
    if (outcome.kind === 'retry') return null;
    // Reported, or refused for good (a wrong pixel key): either way it is never sent again. The
    // answer is kept first, so that a reported install always has the answer it got.
    if (outcome.kind === 'ok') {
      answer = outcome.body as InstallAnswer;
      await writeKey(STORAGE_KEYS.installAnswer, outcome.text);
    }
    reported = true;
    await writeKey(STORAGE_KEYS.installReported, 'true');
    await writeKey(STORAGE_KEYS.pendingInstall, '');
    return answer;
  }

  function trackInstall(options?: TrackInstallOptions): Promise<InstallAnswer | null> {
    if (problem) {
      log(`trackInstall: ${problem}`);
      return Promise.resolve(null);
    }
    installFlight ??= (async () => {
      try {
        const result = await reportInstall(options && typeof options === 'object' ? options : {});
        // Waiting purchases go right after the install, so that they inherit its attribution.
        if (reported) await sendQueue();
        return result;
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
      const amount = purchase?.amount;
      if (!transactionId || transactionId.length > MAX_TRANSACTION_ID) {
        log(`trackPurchase: transactionId must be 1 to ${MAX_TRANSACTION_ID} characters; not sent`);
        return false;
      }
      if (typeof amount !== 'number' || !Number.isFinite(amount)) {
        log('trackPurchase: amount must be a finite number; not sent');
        return false;
      }
      if (!trimmed(purchase.currency)) {
        log('trackPurchase: currency is required; not sent');
        return false;
      }
      const currency = normalCurrency(purchase.currency);
      if (!currency) {
        log(`trackPurchase: currency ${JSON.stringify(purchase.currency)} is not one of ${CURRENCIES.join(', ')} (the service would book it as USD): convert it first; not sent`);
        return false;
      }
      const code = trimmed(purchase.code);
      const item: PendingPurchase = { transaction_id: transactionId, amount, currency, ...(code ? { code } : {}), occurred_at: new Date().toISOString() };
      const stored = await enqueue(item);
      // Storage that cannot keep the install ID or the queue: waiting would lose it, so it goes now.
      const canWait = stored && (await installIdentity()).kept;
      if (canWait && !(await isReported())) {
        // Sent right after the install is reported (trackInstall), so it inherits its attribution.
        log(`purchase ${transactionId} waits for the install to be reported (trackInstall)`);
        return false;
      }
      await sendQueue();
      return outcomes.get(transactionId) === true;
    } catch (error) {
      log('trackPurchase failed', error);
      return false;
    }
  }

  async function getAttribution(): Promise<InstallAnswer | null> {
    if (problem) return null;
    try {
      if (installFlight) await installFlight;
      if (answer) return answer;
      if (!(await isReported())) return null;
      const stored = await readKey(STORAGE_KEYS.installAnswer);
      if (!stored) return null;
      const parsed: unknown = JSON.parse(stored);
      if (!isInstallAnswer(parsed)) return null;
      answer = parsed;
      return answer;
    } catch (error) {
      log('getAttribution failed', error);
      return null;
    }
  }

  async function wouldReadClipboard(): Promise<boolean> {
    if (problem) return false;
    try {
      const clipboard = config.clipboard;
      if (!clipboard || typeof clipboard.getString !== 'function' || installFlight) return false;
      if (await isReported()) return false;
      if (!(await installIdentity()).kept) return false;
      if (parsePendingInstall(await readKey(STORAGE_KEYS.pendingInstall))?.clipboard_token) return false;
      return await clipboardHasText(clipboard);
    } catch (error) {
      log('wouldReadClipboard failed', error);
      return false;
    }
  }

  async function trackOpen(url: string): Promise<OpenAnswer | null> {
    if (problem) {
      log(`trackOpen: ${problem}`);
      return null;
    }
    try {
      if (!trimmed(url)) {
        log('trackOpen: url is required; not sent');
        return null;
      }
      const outcome = await post(OPENS_PATH, { pixel_key: config.pixelKey, url, install_id: await getInstallId(), platform: config.platform }, isOpenAnswer);
      return outcome.kind === 'ok' ? (outcome.body as OpenAnswer) : null;
    } catch (error) {
      log('trackOpen failed', error);
      return null;
    }
  }

  return {
    trackInstall,
    trackPurchase,
    // Never rejects: storage failures end in an ID kept in memory for this launch.
    getInstallId,
    getAttribution,
    wouldReadClipboard,
    trackOpen,
  };
}

/** The currency trimmed and upper-cased when the service books it, else undefined. */
function normalCurrency(value: unknown): string | undefined {
  const c = typeof value === 'string' ? value.trim().toUpperCase() : '';
  return CURRENCIES.includes(c) ? c : undefined;
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

/** The default client's kept install answer (with `install.deep_link`), or null. */
export function getAttribution(): Promise<InstallAnswer | null> {
  if (!defaultClient) {
    notConfigured('getAttribution');
    return Promise.resolve(null);
  }
  return defaultClient.getAttribution();
}

export function wouldReadClipboard(): Promise<boolean> {
  if (!defaultClient) {
    notConfigured('wouldReadClipboard');
    return Promise.resolve(false);
  }
  return defaultClient.wouldReadClipboard();
}

/** Reports an open of the app by a creator link's URL (Universal Link / App Link); its answer or null. */
export function trackOpen(url: string): Promise<OpenAnswer | null> {
  if (!defaultClient) {
    notConfigured('trackOpen');
    return Promise.resolve(null);
  }
  return defaultClient.trackOpen(url);
}
