import type { Money } from './api';
import { announce, type Child, h, uid } from './dom';
import { currencies, formatMoney } from './format';

/** Pieces every page uses: states (loading, error, empty), copy buttons, money, sortable tables. */

export const loading = (what: string) => h('p', { class: 'loading', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), `Loading ${what}…`);

export const errorBox = (message: string) => h('div', { class: 'error', role: 'alert' }, h('strong', null, 'Something went wrong. '), message);

/** Reads what a busy region shows; a failed read shows its sentence there and answers undefined. */
export async function readInto<T>(region: HTMLElement, read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    region.replaceChildren(errorBox((err as Error).message));
    return undefined;
  } finally {
    region.removeAttribute('aria-busy');
  }
}

export const emptyState = (...children: Child[]) => h('div', { class: 'empty' }, ...children);

/** A button that copies `text`; where the clipboard is refused, it selects the text for Ctrl+C. */
export function copyButton(text: string, what: string): HTMLButtonElement {
  const label = `Copy ${what}`;
  const button = h('button', { type: 'button', class: 'copy', 'aria-label': label, 'data-copy': text }, 'Copy');
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
      announce(`${what} copied`);
    } catch {
      const field = h('input', { type: 'text', readonly: true, value: text, 'aria-label': what, class: 'copy-fallback' });
      button.replaceWith(field);
      field.select();
      announce(`Copying was refused: press Control C (or Command C) to copy the selected ${what}`);
      return;
    }
    setTimeout(() => {
      button.textContent = 'Copy';
    }, 2000);
  });
  return button;
}

/** Money per currency, one line each; a dash when there is none. */
export function moneyLines(money: Money, order?: string[]): Child {
  // A table passes its one order (its largest currency first), so every row lists currencies alike.
  const list = order ? order.filter((c) => money[c] !== undefined) : currencies(money);
  if (list.length === 0) return h('span', { class: 'none' }, '—');
  return list.map((c) => h('span', { class: 'money' }, formatMoney(money[c]!, c)));
}

export type Column<T> = {
  key: string;
  label: string;
  numeric?: boolean;
  /** What the column sorts by; absent: not sortable. */
  sort?: (row: T) => number | string;
  cell: (row: T) => Child;
};

/**
 * A table whose sortable headers are buttons (aria-sort on the header). Sorting orders the
 * rows shown; numbers start descending, text ascending. On phones each row becomes a card
 * whose cells carry their column's name (data-label, see portal.css).
 */
export type SortState = { key: string | null; dir: 'ascending' | 'descending' };

/** `state` is kept up to date, so a table rebuilt with more rows keeps its order. */
export function sortableTable<T>(caption: string, columns: Column<T>[], rows: T[], state: SortState = { key: null, dir: 'descending' }): HTMLElement {
  let sortKey = state.key;
  let dir = state.dir;
  const captionId = uid('caption');
  const table = h('table', { class: 'sortable', 'aria-labelledby': captionId });
  const tbody = h('tbody');

  const header = () =>
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        columns.map((col) => {
          const sorted = col.key === sortKey;
          if (!col.sort) return h('th', { scope: 'col', class: col.numeric ? 'num' : null }, col.label);
          return h(
            'th',
            { scope: 'col', class: col.numeric ? 'num' : null, 'aria-sort': sorted ? dir : 'none' },
            h(
              'button',
              { type: 'button', class: 'sort', 'data-sort': col.key, onclick: () => sortBy(col) },
              col.label,
              h('span', { class: 'arrow', 'aria-hidden': 'true' }, sorted ? (dir === 'ascending' ? '▲' : '▼') : '↕'),
            ),
          );
        }),
      ),
    );

  const body = () => {
    const col = columns.find((c) => c.key === sortKey);
    const ordered = [...rows];
    if (col?.sort) {
      const key = col.sort;
      ordered.sort((a, b) => {
        const x = key(a);
        const y = key(b);
        const order = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
        return dir === 'ascending' ? order : -order;
      });
    }
    tbody.replaceChildren(
      ...ordered.map((row) =>
        h(
          'tr',
          null,
          columns.map((c) => h('td', { class: c.numeric ? 'num' : null, 'data-label': c.label }, c.cell(row))),
        ),
      ),
    );
  };

  const sortBy = (col: Column<T>) => {
    if (sortKey === col.key) dir = dir === 'ascending' ? 'descending' : 'ascending';
    else {
      sortKey = col.key;
      dir = col.numeric ? 'descending' : 'ascending';
    }
    state.key = sortKey;
    state.dir = dir;
    table.querySelector('thead')!.replaceWith(header());
    body();
    (table.querySelector(`button[data-sort="${col.key}"]`) as HTMLButtonElement | null)?.focus();
    announce(`Sorted by ${col.label}, ${dir}`);
  };

  table.append(header(), tbody);
  body();
  return h('div', { class: 'table-wrap', role: 'region', 'aria-labelledby': captionId, tabindex: 0 }, h('h2', { id: captionId, class: 'table-title' }, caption), table);
}

/** A field with its label (and an optional hint read out with it). */
export function field(label: string, input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, hint?: string): HTMLElement {
  input.id ||= uid('field');
  const hintEl = hint ? h('span', { class: 'hint', id: uid('hint') }, hint) : null;
  if (hintEl) input.setAttribute('aria-describedby', hintEl.id);
  return h('div', { class: 'field' }, h('label', { for: input.id }, label), input, hintEl);
}

/** Runs a write: the container's buttons are disabled meanwhile, an error shows in words in it. */
export async function submitting(container: HTMLElement, run: () => Promise<void>): Promise<void> {
  const status = container.querySelector('.form-error') ?? container.appendChild(h('p', { class: 'form-error', role: 'alert' }));
  status.textContent = '';
  const buttons = [...container.querySelectorAll('button')].filter((b) => !b.disabled);
  for (const b of buttons) b.disabled = true;
  try {
    await run();
  } catch (err) {
    status.textContent = err instanceof Error ? err.message : String(err);
  } finally {
    for (const b of buttons) b.disabled = false;
  }
}
