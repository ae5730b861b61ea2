import uPlot from 'uplot';
import { api, type Money } from '../api';
import { type Child, h } from '../dom';
import { change, currencies, formatDay, formatInt, formatMoney, formatShortDay } from '../format';
import type { PortalPage } from '../page';
import { periodPicker, rangeQuery } from '../period';
import { emptyState, loading, moneyLines, readInto } from '../ui';

type Day = { date: string; clicks: number; installs: number; conversions: number; revenue: Money };
type Totals = {
  start_date: string;
  end_date: string;
  clicks: number;
  bot_clicks?: number;
  installs: number;
  installs_by_method?: Record<string, number>;
  conversions: number;
  revenue: Money;
  refunds: Money;
  daily: Day[];
};

/** How an install was credited (its resolution method), as the breakdown under Installs says it. */
const METHODS: [string, string][] = [
  ['click', 'from link clicks'],
  ['clipboard', 'from the install page (clipboard)'],
  ['code', 'from creator codes'],
  ['ip', 'from IP matches'],
  ['unattributed', 'unattributed'],
];

/** Whether a range holds anything to compare with: before a brand's first fact it holds nothing. */
const hasData = (t: Totals) =>
  t.clicks > 0 || (t.bot_clicks ?? 0) > 0 || t.installs > 0 || t.conversions > 0 || Object.keys(t.revenue).length > 0 || Object.keys(t.refunds).length > 0;
type Overview = Totals & { period: string; previous: Totals };

const COUNTS = [
  { key: 'clicks', label: 'Clicks', color: '#1d4ed8' },
  { key: 'installs', label: 'Installs', color: '#047857' },
  { key: 'conversions', label: 'Conversions', color: '#b45309' },
] as const;

/** Overview: the period's headline numbers against the period before, and a chart per day. */
export const overviewPage: PortalPage = {
  path: '',
  title: 'Overview',
  ranged: true,
  async render(view, rerender) {
    view.append(h('h1', { tabindex: -1 }, 'Overview'));
    const body = h('div', { 'aria-busy': 'true' }, loading('the overview'));
    view.append(periodPicker(rerender), body);
    const data = await readInto(body, () => api<Overview>('GET', `/attribution/overview?${rangeQuery()}`));
    if (!data) return;
    view.querySelector('form.period')!.replaceWith(periodPicker(rerender, data));
    // One currency order for every money line of the page: the largest amount first.
    const order = currencies(data.revenue, data.previous.revenue, data.refunds, data.previous.refunds);
    body.replaceChildren(cards(data, order), ...empty(data), chart(data, order));
  },
};

function cards(data: Overview, order: string[]): HTMLElement {
  const prev = data.previous;
  // A previous range with nothing in it (before the brand's first fact) gives no comparison: every card would read "new".
  const compare = hasData(prev);
  const count = (key: 'clicks' | 'installs' | 'conversions', label: string) =>
    card(
      key,
      label,
      h('p', { class: 'value' }, formatInt(data[key])),
      compare ? changeLine(change(data[key], prev[key])) : null,
      key === 'clicks' && data.bot_clicks ? h('p', { class: 'hint bots' }, `${formatInt(data.bot_clicks)} more from bots and link previews, not counted`) : null,
      key === 'installs' ? installSources(data) : null,
    );
  const money = (key: 'revenue' | 'refunds', label: string) => {
    const list = order.filter((c) => data[key][c] !== undefined || prev[key][c] !== undefined);
    const lines: Child = list.length
      ? list.map((c) =>
          h(
            'div',
            { class: 'money-line', 'data-currency': c },
            h('p', { class: 'value' }, formatMoney(data[key][c] ?? 0, c)),
            compare ? changeLine(change(data[key][c] ?? 0, prev[key][c] ?? 0, (n) => formatMoney(n, c)), key === 'refunds') : null,
          ),
        )
      : h('p', { class: 'value none' }, key === 'revenue' ? 'No revenue yet' : 'No refunds');
    return card(key, label, lines);
  };
  const range = `${formatDay(prev.start_date)} – ${formatDay(prev.end_date)}`;
  return h(
    'section',
    { 'aria-labelledby': 'totals-title' },
    h('h2', { id: 'totals-title', class: 'visually-hidden' }, 'Totals'),
    h('ul', { class: 'cards' }, count('clicks', 'Clicks'), count('installs', 'Installs'), count('conversions', 'Conversions'), money('revenue', 'Revenue'), money('refunds', 'Refunds')),
    h(
      'p',
      { class: 'hint compare' },
      compare
        ? `Changes compare with ${range}. `
        : `No change is shown: the period before, ${range}, has no clicks, installs or purchases to compare with (it comes before your first one). `,
      'Revenue counts refunds as negative; sandbox purchases never count.',
    ),
  );
}

/** Where the period's installs came from: each resolution method with installs, so links' installs need not add up to the total. */
function installSources(data: Overview): HTMLElement | null {
  const by = data.installs_by_method ?? {};
  const lines = METHODS.filter(([m]) => (by[m] ?? 0) > 0).map(([m, words]) => h('li', { 'data-method': m }, `${formatInt(by[m]!)} ${words}`));
  return lines.length ? h('ul', { class: 'hint sources', 'aria-label': 'Where the installs came from' }, lines) : null;
}

function card(metric: string, label: string, ...content: Child[]): HTMLElement {
  return h('li', { class: 'card metric', 'data-metric': metric }, h('h3', null, label), ...content);
}

/** A change in green when it is good news, in red when bad: more refunds (`upIsBad`) are bad news. */
function changeLine(c: ReturnType<typeof change>, upIsBad = false): HTMLElement {
  const rising = c.direction === 'up' || c.direction === 'new';
  const arrow = rising ? '▲' : c.direction === 'down' ? '▼' : '';
  const tone = c.direction === 'flat' ? 'flat' : rising !== upIsBad ? 'good' : 'bad';
  return h(
    'p',
    { class: `change ${c.direction} ${tone}` },
    h('span', { 'aria-hidden': 'true' }, `${arrow} ${c.text} vs previous`.trim()),
    h('span', { class: 'visually-hidden' }, c.label),
  );
}

function empty(data: Overview): HTMLElement[] {
  const none = (t: Totals) => t.clicks === 0 && t.installs === 0 && t.conversions === 0;
  if (!none(data)) return [];
  const earlier = !none(data.previous);
  return [
    emptyState(
      h('h2', null, earlier ? 'Nothing in this period' : 'No clicks yet'),
      h(
        'p',
        null,
        earlier
          ? 'The previous period had activity, this one has none. Pick a longer period, or check that your creators still share their links.'
          : "Put a creator's link in their bio or post: clicks show here within a minute. ",
        earlier ? null : h('a', { href: '/portal/links', 'data-nav': 'links' }, 'See your links.'),
      ),
      h('p', null, 'Purchases and sign-ups appear once the pixel or the app SDK sends them: ', h('a', { href: '/portal/setup', 'data-nav': 'setup' }, 'set them up.')),
    ),
  ];
}

/** Clicks on the left axis, installs and conversions on the right; the previous period faint behind, day for day. */
function chart(data: Overview, order: string[]): HTMLElement {
  const days = data.daily;
  const prev = data.previous.daily;
  const xs = days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
  const series = [...COUNTS.map((c) => days.map((d) => d[c.key])), ...COUNTS.map((c) => days.map((_, i) => prev[i]?.[c.key] ?? 0))];
  // Away from the plot the legend shows each line's total over the period; over it, that day's number.
  const totals = series.map((ys) => ys.reduce((a, b) => a + b, 0));
  const legendValue = (_u: uPlot, v: number | null, si: number, idx: number | null) => (idx == null ? formatInt(totals[si - 1]!) : v == null ? '' : formatInt(v));
  const plot = h('div', { class: 'plot', 'aria-hidden': 'true' });
  const figure = h(
    'figure',
    { class: 'chart card', 'aria-labelledby': 'chart-title' },
    h('h2', { id: 'chart-title' }, 'Per day'),
    h(
      'figcaption',
      null,
      `Clicks (left axis), installs and conversions (right axis) per day from ${formatDay(data.start_date)} to ${formatDay(data.end_date)}; ` +
        'the previous period is drawn faintly behind, day for day. The table below holds the same numbers.',
    ),
    plot,
    dailyTable(days, order),
  );

  // On phones the axes go without their titles (the caption names them) to leave the plot its width.
  const narrow = window.innerWidth < 600;
  const scale = (key: string) => (key === 'clicks' ? 'clicks' : 'small');
  const opts: uPlot.Options = {
    width: 600,
    height: 260,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    scales: { x: { time: true }, clicks: { range: (_u, _min, max) => [0, Math.max(4, max)] }, small: { range: (_u, _min, max) => [0, Math.max(4, max)] } },
    axes: [
      {},
      { scale: 'clicks', label: narrow ? undefined : 'Clicks', values: (_u, ticks) => ticks.map((t) => formatInt(t)) },
      { scale: 'small', side: 1, label: narrow ? undefined : 'Installs, conversions', grid: { show: false }, values: (_u, ticks) => ticks.map((t) => formatInt(t)) },
    ],
    series: [
      { label: 'Day', value: (_u, ts) => (ts == null ? 'all days' : formatShortDay(new Date(ts * 1000).toISOString().slice(0, 10))) },
      ...COUNTS.map((c) => ({ label: c.label, scale: scale(c.key), stroke: c.color, width: 2, points: { show: days.length <= 14 }, value: legendValue })),
      ...COUNTS.map((c) => ({ label: `${c.label}, previous`, scale: scale(c.key), stroke: `${c.color}59`, width: 1.5, dash: [5, 4], points: { show: false }, value: legendValue })),
    ],
  };
  // uPlot draws once the element has a width; it follows the width from then on.
  requestAnimationFrame(() => {
    const chartWidth = () => Math.max(280, plot.clientWidth);
    const u = new uPlot({ ...opts, width: chartWidth(), height: window.innerWidth < 600 ? 220 : 280 }, [xs, ...series], plot);
    new ResizeObserver(() => u.setSize({ width: chartWidth(), height: window.innerWidth < 600 ? 220 : 280 })).observe(plot);
  });
  return figure;
}

function dailyTable(days: Day[], order: string[]): HTMLElement {
  return h(
    'details',
    { class: 'daily' },
    h('summary', null, 'Show the numbers per day'),
    h(
      'div',
      { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': 'Numbers per day' },
      h(
        'table',
        null,
        h('caption', { class: 'visually-hidden' }, 'Numbers per day'),
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Day'), COUNTS.map((c) => h('th', { scope: 'col', class: 'num' }, c.label)), h('th', { scope: 'col', class: 'num' }, 'Revenue'))),
        h(
          'tbody',
          null,
          [...days].reverse().map((d) =>
            h(
              'tr',
              null,
              h('th', { scope: 'row', 'data-label': 'Day' }, formatDay(d.date)),
              COUNTS.map((c) => h('td', { class: 'num', 'data-label': c.label }, formatInt(d[c.key]))),
              h('td', { class: 'num', 'data-label': 'Revenue' }, moneyLines(d.revenue, order)),
            ),
          ),
        ),
      ),
    ),
  );
}
