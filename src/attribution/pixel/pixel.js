/* svc web pixel, interface v1: dependency-free browser JavaScript (ES2020), served as written at /pixel.js?v=1.
 * Its snippet, the click token it keeps, queued calls, retries and deduplication: docs/api.md#web-pixel.
 * Nothing here throws into the page. */
(() => {
  const VERSION = '1';
  const EVENT_TYPES = ['purchase', 'renewal', 'refund', 'trial', 'signup', 'lead', 'custom', 'install'];
  const CLICK_TOKEN = /^svc_[A-Za-z0-9_-]{8,200}$/;
  const CID_PARAM = 'svc_cid';
  const CID_KEY = 'svc_cid';
  const PENDING_KEY = 'svc_pending';
  const CID_DAYS = 30;
  const MAX_PENDING = 100;
  const FIRST_RETRY_MS = 1000;
  const MAX_RETRY_MS = 60000;

  const loader = window.svc;
  if (loader?.loaded) return; // included twice: the first copy serves

  const memory = new Map(); // stands in for localStorage where it is blocked
  const state = { pixelKey: null, base: serviceOrigin(), beforeInit: [], sending: false, failures: 0, timer: null };

  function warn(message) {
    try {
      console.warn(`[svc pixel] ${message}`);
    } catch {
      // nothing left to do
    }
  }

  function serviceOrigin() {
    try {
      const src = document.currentScript?.src;
      if (src) return new URL(src, window.location.href).origin;
    } catch {
      // no script element: init's endpoint option must be used
    }
    return '';
  }

  // Storage: localStorage when allowed, memory otherwise.
  function load(key) {
    try {
      const value = window.localStorage.getItem(key);
      if (value !== null) return value;
    } catch {
      // blocked storage
    }
    return memory.get(key) ?? null;
  }

  function store(key, value) {
    memory.set(key, value);
    try {
      window.localStorage.setItem(key, value);
    } catch {
      // blocked or full storage: memory keeps it for this page
    }
  }

  function parseJson(text) {
    try {
      return text ? JSON.parse(text) : null;
    } catch {
      return null;
    }
  }

  // The click token: captured from the landing URL, kept in a cookie and in localStorage.
  function captureClickToken() {
    const token = new URLSearchParams(window.location.search).get(CID_PARAM);
    if (!token || !CLICK_TOKEN.test(token)) return;
    const maxAge = CID_DAYS * 86400;
    const secure = window.location.protocol === 'https:' ? '; Secure' : '';
    // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is missing from Safari and Firefox; the value is a checked token
    document.cookie = `${CID_KEY}=${token}; Max-Age=${maxAge}; Path=/; SameSite=Lax${secure}`;
    store(CID_KEY, JSON.stringify({ token, expires: Date.now() + maxAge * 1000 }));
  }

  function clickToken() {
    const saved = parseJson(load(CID_KEY));
    if (typeof saved?.token === 'string' && CLICK_TOKEN.test(saved.token) && saved.expires > Date.now()) return saved.token;
    const cookie = new RegExp(`(?:^|;\\s*)${CID_KEY}=([^;]*)`).exec(document.cookie)?.[1];
    return cookie && CLICK_TOKEN.test(cookie) ? cookie : null;
  }

  // Values from the page, made safe to send.
  function text(value, max) {
    const s = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
    return typeof s === 'string' && s.trim() ? s.trim().slice(0, max) : null;
  }

  function number(value) {
    const n = typeof value === 'string' && value.trim() ? Number(value) : value;
    return typeof n === 'number' && Number.isFinite(n) ? n : null;
  }

  function randomId() {
    const bytes = window.crypto.getRandomValues(new Uint8Array(16));
    return `px_${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
  }

  // The pending queue, in storage so that a closed page or an outage loses nothing.
  function pending() {
    const list = parseJson(load(PENDING_KEY));
    if (!Array.isArray(list)) return [];
    return list.filter((item) => typeof item?.key === 'string' && typeof item.url === 'string' && item.body && typeof item.body === 'object');
  }

  function savePending(list) {
    store(PENDING_KEY, JSON.stringify(list.slice(-MAX_PENDING)));
  }

  function track(eventType, props) {
    const type = typeof eventType === 'string' ? eventType.toLowerCase() : '';
    if (!EVENT_TYPES.includes(type)) return warn(`unknown event type: ${String(eventType)}`);
    const p = props && typeof props === 'object' ? props : {};
    const amount = number(p.amount);
    const body = {
      pixel_key: state.pixelKey,
      event_type: type,
      source: 'pixel',
      transaction_id: text(p.transaction_id, 128) || randomId(),
      occurred_at: new Date().toISOString(),
      click_token: clickToken(),
      code: text(p.code, 64),
      external_user_id: text(p.external_user_id, 256),
      currency: text(p.currency, 8),
      amount,
      amount_cents: amount === null ? number(p.amount_cents) : null,
    };
    for (const field of Object.keys(body)) if (body[field] === null) delete body[field];

    const key = `${type}:${body.transaction_id}`;
    const list = pending();
    if (!list.some((item) => item.key === key)) {
      list.push({ key, url: `${state.base}/api/public/attribution/events`, body });
      savePending(list);
    }
    flush();
  }

  // Sends the oldest pending event; once the service answered it, the next one.
  function flush() {
    if (state.sending || state.timer) return;
    const item = pending()[0];
    if (!item) return;
    state.sending = true;
    post(item.url, item.body, (outcome) => {
      state.sending = false;
      if (outcome === 'retry') return retryLater();
      if (outcome === 'refused') warn(`event refused by the service: ${item.key}`);
      savePending(pending().filter((p) => p.key !== item.key));
      state.failures = 0;
      flush();
    });
  }

  function retryLater() {
    const delay = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** state.failures);
    state.failures += 1;
    state.timer = setTimeout(
      () => {
        state.timer = null;
        flush();
      },
      delay / 2 + Math.random() * (delay / 2),
    );
  }

  // outcome: 'sent', 'refused' (a 4xx other than 408 and 429: the same body would fail again) or 'retry'.
  function post(url, body, done) {
    const finish = (status) => {
      if (status >= 200 && status < 300) done('sent');
      else if (status >= 400 && status < 500 && status !== 408 && status !== 429) done('refused');
      else done('retry');
    };
    try {
      // keepalive: an event tracked as the page unloads still goes out.
      fetch(url, { method: 'POST', mode: 'cors', credentials: 'omit', keepalive: true, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }).then(
        (res) => finish(res.status),
        () => finish(0),
      );
    } catch {
      finish(0);
    }
  }

  function init(pixelKey, options) {
    if (typeof pixelKey !== 'string' || !pixelKey.startsWith('pk_')) return warn("init needs the brand's pixel key (pk_...)");
    state.pixelKey = pixelKey;
    if (typeof options?.endpoint === 'string') state.base = options.endpoint.replace(/\/+$/, '');
    const waiting = state.beforeInit;
    state.beforeInit = [];
    for (const args of waiting) run(args);
  }

  function run(args) {
    const [command, ...rest] = args;
    if (command === 'init') return init(...rest);
    if (command === 'track') {
      if (!state.pixelKey) return state.beforeInit.push(args); // tracked before init: kept until it
      return track(...rest);
    }
    warn(`unknown command: ${String(command)}`);
  }

  function svc(...args) {
    try {
      run(args);
    } catch (e) {
      warn(`ignored a call that failed: ${e?.message}`);
    }
  }
  svc.loaded = true;
  svc.version = VERSION;

  try {
    const queued = Array.isArray(loader?.q) || typeof loader?.q?.length === 'number' ? Array.from(loader.q) : [];
    window.svc = svc;
    captureClickToken();
    for (const args of queued) svc(...Array.from(args));
    flush(); // events left by earlier pages
    window.addEventListener('online', flush);
  } catch (e) {
    warn(`could not start: ${e?.message}`);
  }
})();
