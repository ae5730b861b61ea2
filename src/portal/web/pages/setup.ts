import { api } from '../api';
import { h } from '../dom';
import type { PortalPage } from '../page';
import { copyButton, field, loading, readInto, submitting } from '../ui';

type Setup = {
  pixel_key: string;
  snippet: string;
  pixel_url: string;
  sdk_docs_url: string;
  /** The React Native configure call, when the API answers it. */
  sdk_snippet?: string;
  /** Each SDK package's start-up code. */
  sdk_snippets?: { react_native: string; swift: string };
  install_endpoint: string;
  events_endpoint: string;
};

/** The brand's app identifiers (GET/PUT /attribution/apps); null: that platform is not set. */
type Apps = {
  ios: { team_id: string; bundle_id: string } | null;
  android: { package: string; sha256_cert_fingerprints: string[] } | null;
};

const EXAMPLE = "svc('track', 'purchase', { transaction_id: 'order-1042', amount: 49.99, currency: 'USD', code: 'MAYA' });";

/** Setup: the pixel snippet to paste, how to track a purchase, the SDK guide and the endpoints. */
export const setupPage: PortalPage = {
  path: 'setup',
  title: 'Setup',
  ranged: false,
  async render(view) {
    const body = h('div', { 'aria-busy': 'true' }, loading('your setup'));
    view.append(h('h1', { tabindex: -1 }, 'Setup'), body);
    const read = await readInto(body, () => Promise.all([api<Setup>('GET', '/attribution/setup'), api<Apps>('GET', '/attribution/apps')]));
    if (!read) return;
    const [s, apps] = read;
    body.replaceChildren(
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'pixel-title' },
        h('h2', { id: 'pixel-title' }, '1. Add the pixel to your site'),
        h('p', null, 'Paste this into the <head> of every page of your site. It keeps the click a visitor came from, so a purchase is credited to the creator who sent them.'),
        codeBlock(s.snippet, 'pixel snippet'),
        h('p', { class: 'hint' }, 'Your pixel key, ', h('code', null, s.pixel_key), ', is public: it only lets a site send events to your account.'),
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'track-title' },
        h('h2', { id: 'track-title' }, '2. Track purchases'),
        h('p', null, 'Call this where an order is confirmed. The transaction id keeps a purchase from counting twice; code is the creator code the shopper entered, if any.'),
        codeBlock(EXAMPLE, 'purchase example'),
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'app-title' },
        h('h2', { id: 'app-title' }, '3. Apps: add the SDK'),
        h('p', null, 'The mobile SDK reports installs and in-app events. ', h('a', { href: s.sdk_docs_url }, 'Read the SDK guide'), '.'),
        sdkSnippets(s),
        h(
          'dl',
          { class: 'endpoints' },
          endpoint('Install endpoint', s.install_endpoint),
          endpoint('Events endpoint', s.events_endpoint),
          endpoint('Pixel script', s.pixel_url),
        ),
      ),
      appsForm(apps),
    );
  },
};

/**
 * The apps an installed phone opens creator links in: the link host serves the association files
 * built from these on the brand's own domains (docs/link-host.md).
 */
function appsForm(apps: Apps): HTMLElement {
  const input = (name: string, value: string, placeholder: string) =>
    h('input', { type: 'text', name, value, placeholder, autocomplete: 'off', spellcheck: 'false' });
  const teamId = input('team_id', apps.ios?.team_id ?? '', 'ABCDE12345');
  const bundleId = input('bundle_id', apps.ios?.bundle_id ?? '', 'com.yourbrand.app');
  const pkg = input('package', apps.android?.package ?? '', 'com.yourbrand.app');
  const fingerprints = h('textarea', { name: 'sha256_cert_fingerprints', rows: 3, spellcheck: 'false', placeholder: 'AB:CD:…' });
  fingerprints.value = (apps.android?.sha256_cert_fingerprints ?? []).join('\n');
  const form = h(
    'form',
    { class: 'card apps', 'aria-labelledby': 'apps-title' },
    h('h2', { id: 'apps-title' }, '4. Open links in your app'),
    h(
      'p',
      null,
      'With your app installed, a creator link opens the app itself, on the deep link set for that link. Give your app here; your own domains then carry the files iOS and Android check (never a shared domain). Leave a platform empty to turn it off.',
    ),
    h(
      'fieldset',
      null,
      h('legend', null, 'iOS'),
      field('Team ID', teamId, 'Your Apple Developer team ID: 10 letters and digits.'),
      field('Bundle ID', bundleId, "The app's bundle identifier."),
    ),
    h(
      'fieldset',
      null,
      h('legend', null, 'Android'),
      field('Package name', pkg, "The app's application ID."),
      field('SHA-256 certificate fingerprints', fingerprints, 'One a line, as keytool or Play Console shows them (32 pairs such as AB:CD:…).'),
    ),
    h('button', { type: 'submit', class: 'primary' }, 'Save apps'),
  );
  const status = form.appendChild(h('p', { class: 'hint', 'aria-live': 'polite' }));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void submitting(form, async () => {
      const lines = fingerprints.value.split(/[\s,]+/).filter(Boolean);
      status.textContent = '';
      const saved = await api<Apps>('PUT', '/attribution/apps', {
        ios: teamId.value.trim() || bundleId.value.trim() ? { team_id: teamId.value.trim(), bundle_id: bundleId.value.trim() } : null,
        android: pkg.value.trim() || lines.length ? { package: pkg.value.trim(), sha256_cert_fingerprints: lines } : null,
      });
      fingerprints.value = (saved.android?.sha256_cert_fingerprints ?? []).join('\n');
      status.textContent = `Saved: ${[saved.ios && 'iOS', saved.android && 'Android'].filter(Boolean).join(' and ') || 'no app set'}.`;
    });
  });
  return form;
}

/** Each package's start-up code under its own heading; the React Native one alone from an older API. */
function sdkSnippets(s: Setup): HTMLElement[] {
  const rn = s.sdk_snippets?.react_native ?? s.sdk_snippet;
  const blocks: HTMLElement[] = [];
  if (rn) blocks.push(h('h3', { class: 'sdk-name' }, 'React Native'), h('p', null, 'Configure it once at start with this call.'), codeBlock(rn, 'React Native configuration'));
  if (s.sdk_snippets?.swift) {
    blocks.push(
      h('h3', { class: 'sdk-name' }, 'Swift (iOS)'),
      h('p', null, 'Add the SvcAttribution package, then configure it once at launch.'),
      codeBlock(s.sdk_snippets.swift, 'Swift configuration'),
    );
  }
  return blocks;
}

function codeBlock(text: string, what: string): HTMLElement {
  return h('div', { class: 'code-block' }, h('pre', { tabindex: 0, 'aria-label': what }, h('code', null, text)), copyButton(text, what));
}

function endpoint(label: string, url: string): HTMLElement[] {
  return [h('dt', null, label), h('dd', null, h('code', null, url), copyButton(url, label.toLowerCase()))];
}
