import { api, type CreatorRef, type Page } from './api';
import { h, uid } from './dom';

let creatorList: Promise<CreatorRef[]> | null = null;

/** Forgets the creators read: the next session may be another brand's (a session sees one brand). */
export function forgetCreators(): void {
  creatorList = null;
}

/** Every creator with a link or a code: the creator filters' choices, read once per session. */
function creators(): Promise<CreatorRef[]> {
  creatorList ??= Promise.all([
    api<Page<{ creator: CreatorRef }>>('GET', '/attribution/links?limit=100'),
    api<Page<{ creator: CreatorRef }>>('GET', '/attribution/codes?limit=100'),
  ])
    .then(([links, codes]) => {
      const byId = new Map([...links.data, ...codes.data].map((r) => [r.creator.id, r.creator]));
      return [...byId.values()].sort((a, b) => a.name.localeCompare(b.name));
    })
    .catch((err) => {
      creatorList = null;
      throw err;
    });
  return creatorList;
}

/** The creator filter: "All creators" first; the choices fill in when they arrive. */
export function creatorFilter(selected: string, onChange: (creatorId: string) => void): HTMLElement {
  const select = h('select', { id: uid('creator'), name: 'creator_id' }, h('option', { value: '' }, 'All creators'));
  select.addEventListener('change', () => onChange(select.value));
  creators()
    .then((list) => {
      select.append(...list.map((c) => h('option', { value: c.id, selected: c.id === selected }, c.name)));
      if (selected && !list.some((c) => c.id === selected)) select.append(h('option', { value: selected, selected: true }, 'Selected creator'));
    })
    .catch(() => select.append(h('option', { disabled: true }, 'Creators could not be loaded')));
  return h('div', { class: 'field' }, h('label', { for: select.id }, 'Creator'), select);
}
