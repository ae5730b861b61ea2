import { ApiError, api, type Pagination } from '../api';
import { announce, append, h } from '../dom';
import { formatMoment } from '../format';
import type { PortalPage } from '../page';
import { copyButton, emptyState, field, loading, readInto, submitting } from '../ui';

type Domain = {
  id: string;
  hostname: string;
  shared: boolean;
  registered_by: 'operator' | 'portal';
  served: boolean;
  taken: boolean;
  verification: { status: string; checked_at: string | null; records_missing_since: string | null };
  dns: { type: string; name: string; value: string }[];
  certificate: { status: string };
};

/** Domains: the shared ones every brand may use, and this brand's own, with the DNS records to create. */
export const domainsPage: PortalPage = {
  path: 'domains',
  title: 'Domains',
  ranged: false,
  async render(view) {
    const list = h('div', { 'aria-busy': 'true' }, loading('domains'));
    const hostname = h('input', { type: 'text', name: 'hostname', required: true, placeholder: 'go.yourbrand.com', autocomplete: 'off', spellcheck: 'false' });
    const form = h(
      'form',
      { class: 'card add-domain', 'aria-labelledby': 'add-domain-title' },
      h('h2', { id: 'add-domain-title' }, 'Add a custom domain'),
      field('Host name', hostname, 'A subdomain of your site, such as go.yourbrand.com. Its links open once the DNS records shown for it are found.'),
      h('button', { type: 'submit', class: 'primary' }, 'Add domain'),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void submitting(form, async () => {
        const added = await api<Domain>('POST', '/attribution/domains', { hostname: hostname.value.trim() });
        hostname.value = '';
        announce(`${added.hostname} added. Create its DNS records next.`);
        await show(added.id);
      });
    });
    view.append(h('h1', { tabindex: -1 }, 'Domains'), h('p', { class: 'lead' }, 'Links live on a domain: a shared one, or your own.'), form, list);

    const show = async (focusId?: string) => {
      const domains = await readInto(list, allDomains);
      if (!domains) return;
      const own = domains.filter((d) => !d.shared);
      const shared = domains.filter((d) => d.shared);
      const loopback = own.map(loopbackTarget).find(Boolean) ?? (loopbackPortal() ? location.hostname.replace(/^\[|\]$/g, '') : null);
      list.replaceChildren(
        h(
          'section',
          { 'aria-labelledby': 'own-title' },
          h('h2', { id: 'own-title', tabindex: -1 }, 'Your domains'),
          // Once for the page: with PUBLIC_BASE_URL on this machine, no record can bring visitors here.
          loopback
            ? h(
                'p',
                { class: 'note', id: 'loopback-note' },
                `This service's address (PUBLIC_BASE_URL) is on ${loopback}, a loopback address: DNS records pointing there send every visitor to their own computer. `,
                'Whoever runs svc sets PUBLIC_BASE_URL to the public address it is reached at (such as https://links.yourcompany.com) and restarts it; the records shown then name that address.',
              )
            : null,
          own.length
            ? h('ul', { class: 'domain-list' }, own.map((d) => domainItem(d, show)))
            : emptyState(h('p', null, 'No custom domain yet. Add one above (such as go.yourbrand.com) to put your links on your own domain.')),
        ),
        h(
          'section',
          { 'aria-labelledby': 'shared-title' },
          h('h2', { id: 'shared-title' }, 'Shared domains'),
          shared.length
            ? h('ul', { class: 'domain-list' }, shared.map((d) => domainItem(d, show)))
            : h('p', null, 'No shared domains are offered.'),
        ),
      );
      if (focusId) list.querySelector<HTMLElement>(`[data-domain="${focusId}"] h3`)?.focus();
    };
    await show();
  },
};

async function allDomains(): Promise<Domain[]> {
  const all: Domain[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ limit: '100' });
    if (cursor) q.set('cursor', cursor);
    const page: { data: Domain[]; pagination: Pagination } = await api('GET', `/attribution/domains?${q}`);
    all.push(...page.data);
    cursor = page.pagination.has_more ? page.pagination.next_cursor : null;
  } while (cursor);
  return all;
}

type State = { badge: string; tone: 'ok' | 'warn' | 'bad'; text: string };

/** A domain's state in words: whether its links open, and what the brand does next. */
function stateOf(d: Domain): State {
  if (d.shared) return { badge: 'Served', tone: 'ok', text: 'Shared: managed by svc for every brand. Your svc contact puts links on it; it cannot be changed here.' };
  if (d.registered_by === 'operator') return { badge: 'Served', tone: 'ok', text: 'Set up for you by svc: links on it open now.' };
  if (d.verification.status === 'verified' && d.verification.records_missing_since) {
    return {
      badge: 'Records missing',
      tone: 'warn',
      text: `Verified, and its links still open, but its DNS records have been missing since ${formatMoment(d.verification.records_missing_since)}. Put them back at your DNS host:`,
    };
  }
  if (d.verification.status === 'verified') return { badge: 'Verified', tone: 'ok', text: 'Verified: links on it open. Keep these DNS records in place.' };
  if (d.taken) {
    return {
      badge: 'Taken by another claim',
      tone: 'bad',
      text: 'Another brand added this host name too and its DNS records were found first, so it is theirs. Remove this one; if the domain is yours, contact svc.',
    };
  }
  return { badge: 'Pending', tone: 'warn', text: 'Pending: links on it do not open yet. Create these DNS records at your DNS host, then choose Check now.' };
}

/** This page is served from a loopback address (as the service is when PUBLIC_BASE_URL is left unset). */
function loopbackPortal(): boolean {
  const host = location.hostname.replace(/^\[|\]$/g, '');
  return host.startsWith('127.') || host === '::1' || host === 'localhost' || host.endsWith('.localhost');
}

/** The routing record points at this machine itself (PUBLIC_BASE_URL is a loopback address). */
function loopbackTarget(d: Domain): string | null {
  const routing = d.dns.find((r) => r.type !== 'TXT');
  if (!routing) return null;
  const v = routing.value.toLowerCase();
  return v.startsWith('127.') || v === '::1' || v === 'localhost' || v.endsWith('.localhost') ? routing.value : null;
}

function dnsTable(d: Domain, caption: string): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap', role: 'region', 'aria-label': `DNS records for ${d.hostname}`, tabindex: 0 },
    h(
      'table',
      { class: 'dns' },
      h('caption', null, caption),
      h('thead', null, h('tr', null, ['Type', 'Name', 'Value'].map((c) => h('th', { scope: 'col' }, c)))),
      h(
        'tbody',
        null,
        d.dns.map((r) =>
          h('tr', null, h('td', { 'data-label': 'Type' }, r.type), h('td', { 'data-label': 'Name' }, h('code', null, r.name)), h('td', { 'data-label': 'Value' }, h('code', null, r.value), copyButton(r.value, `${r.type} value for ${r.name}`))),
        ),
      ),
    ),
  );
}

function domainItem(d: Domain, refresh: (focusId?: string) => Promise<void>): HTMLElement {
  const state = stateOf(d);
  const byOperator = d.shared || d.registered_by === 'operator';
  const item = h(
    'li',
    { class: 'card domain', 'data-domain': d.id, 'data-state': state.badge.toLowerCase().replace(/\W+/g, '-') },
    h('h3', { tabindex: -1 }, d.hostname),
    h(
      'p',
      { class: 'badges' },
      h('span', { class: `badge ${state.tone}` }, state.badge),
      d.shared ? h('span', { class: 'badge muted' }, 'Shared') : byOperator ? h('span', { class: 'badge muted' }, 'Set up by svc') : null,
    ),
    h('p', { class: 'state' }, state.text),
  );
  if (d.shared) return item;
  const localName = d.hostname === 'localhost' || d.hostname.endsWith('.localhost');
  append(item, [
    !byOperator && !d.taken
      ? h('p', { class: 'hint' }, d.verification.checked_at ? `Last checked ${formatMoment(d.verification.checked_at)}.` : 'Not checked yet.')
      : null,
    localName
      ? h('p', { class: 'note' }, 'A name under localhost: every browser opens it on its own computer, so its links work on the machine running svc only. It is for trying svc out.')
      : null,
    d.taken || !d.dns.length || localName
      ? null
      : byOperator
        ? h('details', { class: 'records' }, h('summary', null, 'DNS records that route it to svc'), dnsTable(d, 'DNS records'))
        : dnsTable(d, state.badge === 'Pending' ? 'Create these DNS records at your DNS host' : state.badge === 'Verified' ? 'DNS records (in place)' : 'DNS records to put back'),
  ]);
  const actions = h('div', { class: 'actions' });
  const check = h('button', { type: 'button' }, 'Check now');
  check.addEventListener('click', () => {
    void submitting(item, async () => {
      try {
        const checked = await api<Domain>('POST', `/attribution/domains/${d.id}/check`);
        const words = checked.verification.status !== 'verified' ? 'DNS records not found yet' : checked.verification.records_missing_since ? 'verified, but its DNS records are missing' : 'verified';
        announce(`${d.hostname}: ${words}`);
      } catch (err) {
        // Another claim of the host name verified first: the card says so once the list is read again.
        if (!(err instanceof ApiError && err.code === 'domain_taken')) throw err;
        announce(`${d.hostname} was verified by another brand first.`);
      }
      await refresh(d.id);
    });
  });
  const remove = h('button', { type: 'button', class: 'danger' }, 'Remove');
  // A served operator domain needs no check; a taken claim cannot pass one.
  const idle = d.taken || byOperator ? [remove] : [check, remove];
  remove.addEventListener('click', () => {
    // A second, explicit step instead of window.confirm, so keyboard and screen reader users see it in place.
    const confirm = h('button', { type: 'button', class: 'danger' }, `Yes, remove ${d.hostname}`);
    const cancel = h('button', { type: 'button' }, 'Cancel');
    confirm.addEventListener('click', () => {
      void submitting(item, async () => {
        await api('DELETE', `/attribution/domains/${d.id}`);
        announce(`${d.hostname} removed`);
        await refresh();
        // Its card is gone: focus goes to the list it was in, not to the top of the page.
        document.getElementById('own-title')?.focus();
      });
    });
    cancel.addEventListener('click', () => {
      actions.replaceChildren(...idle);
      remove.focus();
    });
    actions.replaceChildren(h('span', null, `Remove ${d.hostname}? Links can no longer use it.`), confirm, cancel);
    cancel.focus();
  });
  actions.append(...idle);
  item.append(actions);
  return item;
}
