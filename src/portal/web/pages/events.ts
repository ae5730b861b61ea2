import { api, type CreatorRef, type Page } from '../api';
import { creatorFilter } from '../creators';
import { append, h, uid } from '../dom';
import { formatMoment, formatMoney } from '../format';
import type { PortalPage } from '../page';
import { periodPicker, rangeQuery } from '../period';
import { emptyState, loading, readInto } from '../ui';

type LedgerItem = {
  id: string;
  event_type: string;
  transaction_id: string;
  source: string;
  amount: number;
  currency: string;
  occurred_at: string;
  sandbox: boolean;
  external_user_id: string | null;
  link: { id: number; domain: string; slug: string } | null;
  creator: CreatorRef | null;
  code: string | null;
  resolution_method: string;
  confidence: number | null;
};

export const EVENT_TYPES = ['purchase', 'renewal', 'refund', 'trial', 'signup', 'lead', 'custom', 'install'] as const;
const PAGE_SIZE = 25;
const METHODS: Record<string, string> = { click: 'Click', clipboard: 'Clipboard', code: 'Code', ip: 'IP match', unattributed: 'Not credited' };

/**
 * Events: the ledger feed, newest first, 25 rows a page (the API's cursor). Live rows by
 * default; sandbox rows (test purchases, never counted) only in their own view, marked.
 */
export const eventsPage: PortalPage = {
  path: 'events',
  title: 'Events',
  ranged: true,
  async render(view, rerender) {
    const params = new URLSearchParams(location.search);
    const sandbox = params.get('sandbox') === 'true';
    const setParam = (key: string, value: string) => {
      const q = new URLSearchParams(location.search);
      if (value) q.set(key, value);
      else q.delete(key);
      q.delete('cursor');
      history.pushState(null, '', `${location.pathname}?${q}`);
      rerender();
    };

    const typeSelect = h(
      'select',
      { id: uid('type') },
      h('option', { value: '' }, 'All events'),
      EVENT_TYPES.map((t) => h('option', { value: t, selected: params.get('event_type') === t }, label(t))),
    );
    typeSelect.addEventListener('change', () => setParam('event_type', typeSelect.value));
    const creator = creatorFilter(params.get('creator_id') ?? '', (id) => setParam('creator_id', id));

    const rowsName = uid('rows');
    const rowsToggle = h(
      'fieldset',
      { class: 'segments-field' },
      h('legend', null, 'Rows'),
      h(
        'div',
        { class: 'segments' },
        [
          ['false', 'Live'],
          ['true', 'Sandbox'],
        ].map(([value, text]) => {
          const input = h('input', { type: 'radio', name: rowsName, id: `${rowsName}-${value}`, value, checked: String(sandbox) === value });
          input.addEventListener('change', () => setParam('sandbox', value === 'true' ? 'true' : ''));
          return h('span', { class: 'seg' }, input, h('label', { for: input.id }, text));
        }),
      ),
    );

    const body = h('div', { 'aria-busy': 'true' }, loading('events'));
    append(view, [
      h('h1', { tabindex: -1 }, sandbox ? 'Events: sandbox' : 'Events'),
      h('p', { class: 'lead' }, 'Every ledger event the service recorded (purchases, refunds, sign-ups and the other event types), newest first, with what it was credited to. App installs are counted on the overview and the links.'),
      periodPicker(rerender),
      h(
        'div',
        { class: 'filters' },
        h('div', { class: 'field' }, h('label', { for: typeSelect.id }, 'Event type'), typeSelect),
        creator,
        rowsToggle,
      ),
      sandbox
        ? h('p', { class: 'notice sandbox-note', role: 'note' }, 'Sandbox rows are test purchases from the providers\u2019 sandboxes. They are stored apart and never count in any total.')
        : null,
      body,
    ]);

    // Cursors of the pages before this one, so "Newer" goes back without the API paging backwards.
    const cursors: (string | null)[] = [];
    let cursor: string | null = null;
    const show = async (focus: boolean) => {
      body.setAttribute('aria-busy', 'true');
      // The page shown stays while the next one loads; its pager says so and waits.
      for (const b of body.querySelectorAll<HTMLButtonElement>('.pager button')) b.disabled = true;
      body.querySelector('.page-no')?.replaceChildren('Loading…');
      const query = rangeQuery();
      query.set('limit', String(PAGE_SIZE));
      for (const key of ['event_type', 'creator_id']) if (params.get(key)) query.set(key, params.get(key)!);
      if (sandbox) query.set('sandbox', 'true');
      if (cursor) query.set('cursor', cursor);
      const page = await readInto(body, () => api<Page<LedgerItem>>('GET', `/attribution/events?${query}`));
      if (!page) return;
      view.querySelector('form.period')!.replaceWith(periodPicker(rerender, page));
      if (page.data.length === 0 && cursors.length === 0) {
        body.replaceChildren(emptyState(h('p', null, emptyText(sandbox, params))));
        return;
      }
      const pageNo = cursors.length + 1;
      const newer = h('button', { type: 'button', disabled: pageNo === 1, 'data-page': 'newer' }, '← Newer');
      const older = h('button', { type: 'button', disabled: !page.pagination.has_more, 'data-page': 'older' }, 'Older →');
      newer.addEventListener('click', () => {
        cursor = cursors.pop() ?? null;
        void show(true);
      });
      older.addEventListener('click', () => {
        cursors.push(cursor);
        cursor = page.pagination.next_cursor;
        void show(true);
      });
      const captionId = uid('caption');
      body.replaceChildren(
        h(
          'div',
          { class: 'table-wrap', role: 'region', 'aria-labelledby': captionId, tabindex: 0 },
          h('h2', { id: captionId, class: 'table-title' }, `${sandbox ? 'Sandbox events' : 'Events'}, page ${pageNo}`),
          h(
            'table',
            { class: sandbox ? 'events sandbox' : 'events', 'aria-labelledby': captionId },
            h(
              'thead',
              null,
              h('tr', null, ['When', 'Event', 'Amount', 'Credited to', 'How', 'Source', 'Transaction'].map((c) => h('th', { scope: 'col', class: c === 'Amount' ? 'num' : null }, c))),
            ),
            h('tbody', null, page.data.map(row)),
          ),
        ),
        h('nav', { class: 'pager', 'aria-label': 'Event pages' }, newer, h('span', { class: 'page-no' }, `Page ${pageNo}`), older),
      );
      if (focus) body.querySelector<HTMLElement>('.table-wrap')?.focus();
    };
    await show(false);
  },
};

const label = (type: string) => type.charAt(0).toUpperCase() + type.slice(1);

function row(e: LedgerItem): HTMLTableRowElement {
  const parts = [e.creator?.name, e.link ? `${e.link.domain}/${e.link.slug}` : null, e.code ? `code ${e.code}` : null].filter((p): p is string => Boolean(p));
  const credited = parts.flatMap((p, i) => [i > 0 ? ' · ' : null, h('span', { class: 'credit' }, p)]);
  const how = METHODS[e.resolution_method] ?? e.resolution_method;
  return h(
    'tr',
    { 'data-transaction': e.transaction_id, class: e.sandbox ? 'sandbox' : null },
    h('td', { 'data-label': 'When' }, formatMoment(e.occurred_at)),
    h('td', { 'data-label': 'Event' }, label(e.event_type), e.sandbox ? h('span', { class: 'badge warn' }, 'Sandbox') : null),
    h('td', { class: 'num', 'data-label': 'Amount' }, e.amount === 0 ? '—' : formatMoney(e.amount, e.currency)),
    h('td', { 'data-label': 'Credited to' }, credited.length ? credited : h('span', { class: 'none' }, 'Nobody')),
    h('td', { 'data-label': 'How' }, e.confidence === null || e.resolution_method === 'unattributed' ? how : `${how} (${Math.round(e.confidence * 100)}%)`),
    h('td', { 'data-label': 'Source' }, e.source),
    h('td', { 'data-label': 'Transaction' }, h('code', null, e.transaction_id)),
  );
}

function emptyText(sandbox: boolean, params: URLSearchParams): string {
  if (params.get('event_type') || params.get('creator_id')) return 'No events match these filters in this period. Choose "All events" and "All creators", or a longer period.';
  if (sandbox) return 'No sandbox events in this period. Test purchases from a provider sandbox show here, apart from the live ones.';
  return 'No events in this period yet. Add the pixel to your site or the SDK to your app (see Setup), and purchases show here as they happen.';
}
