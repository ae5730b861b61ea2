import { api, type CreatorRef, type Money, type Page } from '../api';
import { creatorFilter } from '../creators';
import { h } from '../dom';
import { currencies, formatInt } from '../format';
import { linkUrl } from '../link-url';
import type { PortalPage } from '../page';
import { periodPicker, rangeQuery } from '../period';
import { type Column, copyButton, emptyState, loading, moneyLines, readInto, sortableTable, type SortState } from '../ui';

type Link = {
  id: string;
  domain: string;
  slug: string;
  type: 'web' | 'app';
  active: boolean;
  destination_url: string;
  /** Where an installed app opens on this link; null for none. */
  deep_link?: string | null;
  creator: CreatorRef;
  clicks: number;
  /** Answered once the link host's bot filter lands; shown when present. */
  bot_clicks?: number;
  installs: number;
  conversions: number;
  revenue: Money;
};
type Code = { id: string; label: string; active: boolean; creator: CreatorRef; conversions: number; revenue: Money };

const status = (active: boolean) => h('span', { class: `badge ${active ? 'ok' : 'muted'}` }, active ? 'Active' : 'Paused');

/** Revenue sorts by the currency with the most money among the rows shown. */
const revenueKey = (rows: { revenue: Money }[]) => {
  const lead = currencies(...rows.map((r) => r.revenue))[0];
  return (r: { revenue: Money }) => (lead ? (r.revenue[lead] ?? 0) : 0);
};

/** The link's address (breaking after its host first when the table is narrow), and under it where the app opens on it (its deep link), when set. */
const linkCell = (r: Link) => [
  h('code', { class: 'url' }, `${r.domain}/`, h('wbr'), r.slug),
  r.deep_link ? h('span', { class: 'deep-link-line' }, 'App opens ', h('code', { class: 'deep-link' }, r.deep_link)) : null,
];

function linkColumns(rows: Link[]): Column<Link>[] {
  const bots = rows.some((r) => typeof r.bot_clicks === 'number');
  const order = currencies(...rows.map((r) => r.revenue));
  const cols: (Column<Link> | false)[] = [
    { key: 'link', label: 'Link', sort: (r) => `${r.domain}/${r.slug}`, cell: linkCell },
    { key: 'creator', label: 'Creator', sort: (r) => r.creator.name, cell: (r) => r.creator.name },
    { key: 'type', label: 'Type', sort: (r) => r.type, cell: (r) => (r.type === 'app' ? 'App' : 'Web') },
    { key: 'active', label: 'Status', sort: (r) => (r.active ? 1 : 0), cell: (r) => status(r.active) },
    { key: 'clicks', label: 'Clicks', numeric: true, sort: (r) => r.clicks, cell: (r) => formatInt(r.clicks) },
    bots && { key: 'bot_clicks', label: 'Bot clicks', numeric: true, sort: (r) => r.bot_clicks ?? 0, cell: (r) => formatInt(r.bot_clicks ?? 0) },
    { key: 'installs', label: 'Installs', numeric: true, sort: (r) => r.installs, cell: (r) => formatInt(r.installs) },
    { key: 'conversions', label: 'Conversions', numeric: true, sort: (r) => r.conversions, cell: (r) => formatInt(r.conversions) },
    { key: 'revenue', label: 'Revenue', numeric: true, sort: revenueKey(rows), cell: (r) => moneyLines(r.revenue, order) },
    { key: 'copy', label: 'URL', cell: (r) => copyButton(linkUrl(r, location), `link ${r.domain}/${r.slug}`) },
  ];
  return cols.filter((c): c is Column<Link> => c !== false);
}

const codeColumns = (rows: Code[], order = currencies(...rows.map((r) => r.revenue))): Column<Code>[] => [
  { key: 'label', label: 'Code', sort: (r) => r.label, cell: (r) => h('code', null, r.label) },
  { key: 'creator', label: 'Creator', sort: (r) => r.creator.name, cell: (r) => r.creator.name },
  { key: 'active', label: 'Status', sort: (r) => (r.active ? 1 : 0), cell: (r) => status(r.active) },
  { key: 'conversions', label: 'Conversions', numeric: true, sort: (r) => r.conversions, cell: (r) => formatInt(r.conversions) },
  { key: 'revenue', label: 'Revenue', numeric: true, sort: revenueKey(rows), cell: (r) => moneyLines(r.revenue, order) },
];

type ListSpec<T> = {
  path: string;
  title: string;
  endpoint: string;
  what: string;
  /** `what` for one row. */
  one: string;
  intro: string;
  columns: (rows: T[]) => Column<T>[];
  sort: SortState;
  none: string;
};

/** A list page: period, creator filter, a sortable table of the brand's rows, more on demand. */
function listPage<T extends { creator: CreatorRef }>(spec: ListSpec<T>): PortalPage {
  return {
    path: spec.path,
    title: spec.title,
    ranged: true,
    async render(view, rerender) {
      const params = new URLSearchParams(location.search);
      const creatorId = params.get('creator_id') ?? '';
      const filter = creatorFilter(creatorId, (id) => {
        const q = new URLSearchParams(location.search);
        if (id) q.set('creator_id', id);
        else q.delete('creator_id');
        history.pushState(null, '', `${location.pathname}?${q}`);
        rerender();
      });
      const body = h('div', { 'aria-busy': 'true' }, loading(spec.what));
      view.append(
        h('h1', { tabindex: -1 }, spec.title),
        h('p', { class: 'lead' }, spec.intro),
        periodPicker(rerender),
        h('div', { class: 'filters' }, filter),
        body,
      );
      const rows: T[] = [];
      const query = rangeQuery();
      query.set('limit', '100');
      if (creatorId) query.set('creator_id', creatorId);
      const more = async (cursor: string | null): Promise<void> => {
        if (cursor) query.set('cursor', cursor);
        const page = await readInto(body, () => api<Page<T>>('GET', `${spec.endpoint}?${query}`));
        if (!page) return;
        rows.push(...page.data);
        view.querySelector('form.period')!.replaceWith(periodPicker(rerender, page));
        if (rows.length === 0) {
          body.replaceChildren(emptyState(h('p', null, creatorId ? `This creator has no ${spec.what} yet. Choose "All creators" to see the others.` : spec.none)));
          return;
        }
        const next = page.pagination.has_more ? page.pagination.next_cursor : null;
        const moreButton = next
          ? h('button', { type: 'button', class: 'more', onclick: () => void more(next).then(() => body.querySelector<HTMLElement>('.table-wrap')?.focus()) }, `Show more ${spec.what}`)
          : null;
        body.replaceChildren(
          sortableTable(`${formatInt(rows.length)} ${rows.length === 1 ? spec.one : spec.what}${next ? ' (more below)' : ''}`, spec.columns(rows), rows, spec.sort),
          moreButton ?? '',
        );
      };
      await more(null);
    },
  };
}

export const linksPage = listPage<Link>({
  path: 'links',
  title: 'Links',
  endpoint: '/attribution/links',
  what: 'links',
  one: 'link',
  intro: "Your creators' links with what they brought in the period. Copy a link to share it.",
  columns: linkColumns,
  sort: { key: null, dir: 'descending' },
  none: "No links yet. Your svc contact makes a link for each creator; put it in the creator's bio or posts and its clicks show here within a minute.",
});

export const codesPage = listPage<Code>({
  path: 'codes',
  title: 'Codes',
  endpoint: '/attribution/codes',
  what: 'codes',
  one: 'code',
  intro: 'Creator codes shoppers enter at checkout, with the conversions and revenue they carried in the period.',
  columns: codeColumns,
  sort: { key: null, dir: 'descending' },
  none: 'No codes yet. Your svc contact makes a code for each creator; shoppers enter it at checkout, your site sends it with the purchase (the code field of the pixel or SDK), and it shows here.',
});
