import { h, uid } from './dom';
import { formatDay } from './format';

/**
 * The period picker (docs/api.md#semantics): the range lives in the page's URL (`period`, or
 * `start_date` and `end_date`), so a reload or a shared link shows the same numbers, and
 * every page that reads over time sends it on to the API as is.
 */
export const PERIODS = [
  ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'],
  ['90d', 'Last 90 days'],
  ['6m', 'Last 6 months'],
  ['ytd', 'Year to date'],
  ['all', 'All time'],
  ['custom', 'Custom dates'],
] as const;

export type Range = { period: string; start_date?: string; end_date?: string };

export function currentRange(): Range {
  const q = new URLSearchParams(location.search);
  const start_date = q.get('start_date') ?? undefined;
  const end_date = q.get('end_date') ?? undefined;
  if (start_date && end_date) return { period: 'custom', start_date, end_date };
  return { period: q.get('period') ?? '30d' };
}

/** The range as the API's query string. */
export function rangeQuery(range = currentRange()): URLSearchParams {
  const q = new URLSearchParams();
  if (range.period === 'custom' && range.start_date && range.end_date) {
    q.set('start_date', range.start_date);
    q.set('end_date', range.end_date);
  } else q.set('period', range.period);
  return q;
}

/** Puts the range into the URL (keeping the page's other parameters) and calls `onChange`. */
function setRange(range: Range, onChange: () => void): void {
  const q = new URLSearchParams(location.search);
  for (const key of ['period', 'start_date', 'end_date', 'cursor']) q.delete(key);
  for (const [key, value] of rangeQuery(range)) q.set(key, value);
  history.pushState(null, '', `${location.pathname}?${q}`);
  onChange();
}

/** A radio group of periods plus two date fields for custom dates; `shown` is the API's answered range. */
export function periodPicker(onChange: () => void, shown?: { start_date: string; end_date: string }): HTMLElement {
  const range = currentRange();
  const name = uid('period');
  const custom = h('div', { class: 'custom-dates', hidden: range.period !== 'custom' });
  const start = h('input', { type: 'date', id: uid('start'), value: range.start_date ?? shown?.start_date ?? '', required: true });
  const end = h('input', { type: 'date', id: uid('end'), value: range.end_date ?? shown?.end_date ?? '', required: true });
  const applyCustom = (event: Event) => {
    event.preventDefault();
    if (start.value && end.value) setRange({ period: 'custom', start_date: start.value, end_date: end.value }, onChange);
  };
  custom.append(
    h('label', { for: start.id }, 'From'),
    start,
    h('label', { for: end.id }, 'To'),
    end,
    h('button', { type: 'submit' }, 'Apply dates'),
  );

  const options = PERIODS.map(([value, label]) => {
    const input = h('input', {
      type: 'radio',
      name,
      value,
      id: `${name}-${value}`,
      checked: range.period === value,
      onchange: () => {
        if (value === 'custom') {
          custom.hidden = false;
          start.focus();
        } else setRange({ period: value }, onChange);
      },
    });
    return h('span', { class: 'seg' }, input, h('label', { for: input.id }, label));
  });
  return h(
    'form',
    { class: 'period', onsubmit: applyCustom },
    h('fieldset', null, h('legend', null, 'Period'), h('div', { class: 'segments' }, options)),
    custom,
    shown ? h('p', { class: 'range-shown' }, `${formatDay(shown.start_date)} – ${formatDay(shown.end_date)} (UTC)`) : null,
  );
}
