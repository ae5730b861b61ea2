import { randomBytes } from 'node:crypto';
import type { DevicePlatform } from '../links/visitor';
import type { ClickAnswer } from '../clicks/record';

/**
 * The HTML the link host answers (the smart install page, and pages for inactive links, wrong
 * methods and outages): server-rendered, no request to another origin but the brand logo's, its one
 * script and style sheet under a per-response CSP nonce.
 */

export type Page = { html: string; csp: string };

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => escapes[c]!);

/** The origin of an http(s) URL, or null: the only origin the page may load from is the logo's. */
function httpOrigin(url: string | null): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.origin : null;
  } catch {
    return null;
  }
}

function policy(nonce: string, imageOrigin: string | null): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    `img-src ${imageOrigin ?? "'none'"}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

// Dark text on white and white on near-black: contrast well above WCAG AA; 48 px touch targets.
const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:17px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#f4f4f5}
main{max-width:420px;margin:0 auto;padding:48px 24px;text-align:center}
img.logo{width:96px;height:96px;object-fit:contain;border-radius:22px;background:#fff}
h1{font-size:1.6rem;margin:16px 0 4px}
p{margin:0 0 24px;color:#3f3f46}
.stores{display:flex;flex-direction:column;gap:12px;margin-bottom:24px}
.store{display:block;min-height:52px;padding:14px 20px;border-radius:12px;background:#111;color:#fff;font-weight:600;text-decoration:none}
.store:hover{background:#333}
a:focus-visible{outline:3px solid #2563eb;outline-offset:3px}
.note{font-size:.85rem;color:#52525b;margin:0 0 20px}
.web{color:#1d4ed8;font-weight:500}
.status{min-height:1.5em;margin-top:16px;font-size:.9rem}
`;

// Copies the click token before leaving for a store, so the app finds it at first launch
// (docs/sdk.md#how-the-sdks-behave); where the Clipboard API is refused, a selected text area and execCommand.
const SCRIPT = `
(function () {
  var main = document.querySelector('main');
  var token = main.getAttribute('data-click-token');
  var status = document.getElementById('status');
  function fallbackCopy(text) {
    var area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.appendChild(area);
    area.select();
    var copied = false;
    try { copied = document.execCommand('copy'); } catch (e) {}
    area.remove();
    return copied;
  }
  function copy(text) {
    if (navigator.clipboard && navigator.clipboard.writeText) {
      return navigator.clipboard.writeText(text).then(function () { return true; }, function () { return fallbackCopy(text); });
    }
    return Promise.resolve(fallbackCopy(text));
  }
  document.querySelectorAll('a[data-store]').forEach(function (button) {
    button.addEventListener('click', function (event) {
      if (!token) return;
      event.preventDefault();
      status.textContent = 'Opening the store…';
      copy(token).then(function () { window.location.href = button.href; });
    });
  });
})();
`;

function htmlPage(opts: { title: string; head?: string; body: string; script?: string; imageOrigin?: string | null }): Page {
  const nonce = randomBytes(16).toString('base64');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(opts.title)}</title>
${opts.head ?? ''}<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
${opts.body}${opts.script ? `\n<script nonce="${nonce}">${opts.script}</script>` : ''}
</body>
</html>
`;
  return { html, csp: policy(nonce, opts.imageOrigin ?? null) };
}

const STORES = {
  ios: { label: 'Download on the App Store', key: 'ios_url' },
  android: { label: 'Get it on Google Play', key: 'android_url' },
} as const;

/** The smart install page of an app link (docs/link-host.md#the-smart-install-page): brand, both stores with the visitor's first, the web fallback. */
export function smartInstallPage(answer: ClickAnswer & { app: NonNullable<ClickAnswer['app']> }, logoUrl: string | null): Page {
  const brand = escapeHtml(answer.brand_name);
  const logoOrigin = httpOrigin(logoUrl);
  const logo = logoOrigin ? `<img class="logo" src="${escapeHtml(logoUrl!)}" alt="${brand} logo" width="96" height="96">` : '';
  const order: ('ios' | 'android')[] = answer.platform_hint === 'android' ? ['android', 'ios'] : ['ios', 'android'];
  const buttons = order
    .map((store) => ({ store, url: answer.app[STORES[store].key] }))
    .filter((b) => b.url)
    .map((b) => `<a class="store" data-store="${b.store}" href="${escapeHtml(b.url!)}">${STORES[b.store].label}</a>`)
    .join('\n');
  const token = answer.click_token ? ` data-click-token="${escapeHtml(answer.click_token)}"` : '';
  const head = [
    `<meta property="og:type" content="website">`,
    `<meta property="og:title" content="${brand}">`,
    `<meta property="og:description" content="Get the ${brand} app">`,
    logoOrigin ? `<meta property="og:image" content="${escapeHtml(logoUrl!)}">` : '',
  ]
    .filter(Boolean)
    .join('\n');
  return htmlPage({
    title: `${answer.brand_name}: get the app`,
    head: `${head}\n`,
    imageOrigin: logoOrigin,
    body: `<main${token}>
${logo}
<h1>${brand}</h1>
<p>Get the app${platformHint(answer.platform_hint)}.</p>
<nav class="stores" aria-label="App stores">
${buttons}
</nav>
${answer.click_token ? '<p class="note">Choosing a store copies a short code to your clipboard, so the app knows which creator sent you.</p>\n' : ''}<a class="web" href="${escapeHtml(answer.app.fallback_url)}">Continue on the web</a>
<p class="status" id="status" role="status" aria-live="polite"></p>
</main>`,
    script: SCRIPT,
  });
}

function platformHint(platform: DevicePlatform | null): string {
  if (platform === 'ios') return ' for your iPhone';
  if (platform === 'android') return ' for your Android phone';
  return '';
}

/** A short page for what is not a visit to an active link (404, 405, 503). */
export function messagePage(title: string, text: string): Page {
  return htmlPage({
    title,
    body: `<main>
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(text)}</p>
</main>`,
  });
}
