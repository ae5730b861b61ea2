import { api, type Pagination } from '../api';
import { announce, append, h } from '../dom';
import { formatMoment } from '../format';
import type { PortalPage } from '../page';
import { copyButton, emptyState, field, loading, readInto, submitting } from '../ui';

type Domain = {
  id: string;
  hostname: string;
  shared: boolean;
  verification: { status: string; checked_at: string | null };
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
      field('Host name', hostname, 'A subdomain of your site, such as go.yourbrand.com. You then create the DNS records shown for it.'),
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
      list.replaceChildren(
        h(
          'section',
          { 'aria-labelledby': 'own-title' },
          h('h2', { id: 'own-title', tabindex: -1 }, 'Your domains'),
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

function domainItem(d: Domain, refresh: (focusId?: string) => Promise<void>): HTMLElement {
  const verified = d.verification.status === 'verified';
  const item = h(
    'li',
    { class: 'card domain', 'data-domain': d.id },
    h('h3', { tabindex: -1 }, d.hostname),
    h(
      'p',
      { class: 'badges' },
      d.shared ? h('span', { class: 'badge muted' }, 'Shared') : null,
      h('span', { class: `badge ${verified ? 'ok' : 'warn'}` }, verified ? 'Verified' : 'Waiting for DNS'),
      h('span', { class: 'badge muted' }, `Certificate: ${d.certificate.status}`),
    ),
  );
  if (d.shared) {
    item.append(h('p', null, 'Managed by svc for every brand: your svc contact puts links on it. It cannot be changed here.'));
    return item;
  }
  append(item, [
    h('p', { class: 'hint' }, d.verification.checked_at ? `Last checked ${formatMoment(d.verification.checked_at)}.` : 'Not checked yet.'),
    d.dns.length
      ? h(
          'div',
          { class: 'table-wrap', role: 'region', 'aria-label': `DNS records for ${d.hostname}`, tabindex: 0 },
          h(
            'table',
            { class: 'dns' },
            h('caption', null, verified ? 'DNS records (in place)' : 'Create these DNS records at your DNS host'),
            h('thead', null, h('tr', null, ['Type', 'Name', 'Value'].map((c) => h('th', { scope: 'col' }, c)))),
            h(
              'tbody',
              null,
              d.dns.map((r) =>
                h('tr', null, h('td', { 'data-label': 'Type' }, r.type), h('td', { 'data-label': 'Name' }, h('code', null, r.name)), h('td', { 'data-label': 'Value' }, h('code', null, r.value), copyButton(r.value, `${r.type} value for ${r.name}`))),
              ),
            ),
          ),
        )
      : null,
  ]);
  const actions = h('div', { class: 'actions' });
  const check = h('button', { type: 'button' }, 'Check now');
  check.addEventListener('click', () => {
    void submitting(item, async () => {
      const checked = await api<Domain>('POST', `/attribution/domains/${d.id}/check`);
      announce(`${d.hostname}: ${checked.verification.status === 'verified' ? 'verified' : 'DNS not in place yet'}`);
      await refresh(d.id);
    });
  });
  const remove = h('button', { type: 'button', class: 'danger' }, 'Remove');
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
      actions.replaceChildren(check, remove);
      remove.focus();
    });
    actions.replaceChildren(h('span', null, `Remove ${d.hostname}? Links can no longer use it.`), confirm, cancel);
    cancel.focus();
  });
  actions.append(check, remove);
  item.append(actions);
  return item;
}
