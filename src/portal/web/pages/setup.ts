import { api } from '../api';
import { h } from '../dom';
import type { PortalPage } from '../page';
import { copyButton, loading, readInto } from '../ui';

type Setup = {
  pixel_key: string;
  snippet: string;
  pixel_url: string;
  sdk_docs_url: string;
  /** The React Native configure call, when the API answers it. */
  sdk_snippet?: string;
  install_endpoint: string;
  events_endpoint: string;
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
    const s = await readInto(body, () => api<Setup>('GET', '/attribution/setup'));
    if (!s) return;
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
        s.sdk_snippet ? [h('p', null, 'React Native: configure it once at start with this call.'), codeBlock(s.sdk_snippet, 'SDK configuration')] : null,
        h(
          'dl',
          { class: 'endpoints' },
          endpoint('Install endpoint', s.install_endpoint),
          endpoint('Events endpoint', s.events_endpoint),
          endpoint('Pixel script', s.pixel_url),
        ),
      ),
    );
  },
};

function codeBlock(text: string, what: string): HTMLElement {
  return h('div', { class: 'code-block' }, h('pre', { tabindex: 0, 'aria-label': what }, h('code', null, text)), copyButton(text, what));
}

function endpoint(label: string, url: string): HTMLElement[] {
  return [h('dt', null, label), h('dd', null, h('code', null, url), copyButton(url, label.toLowerCase()))];
}
