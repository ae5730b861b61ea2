/**
 * A small element builder: the portal's pages are plain DOM, built with `h`. Text goes in
 * as text nodes (never as HTML), so nothing the API answers can inject markup.
 */
export type Child = Node | string | number | null | undefined | false | Child[];
type Handler = (event: Event) => void;
export type Attrs = Record<string, string | number | boolean | null | undefined | Handler>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (typeof value === 'function') el.addEventListener(key.slice(2).toLowerCase(), value);
    else if (value === true) el.setAttribute(key, '');
    else if (value !== false && value !== null && value !== undefined) el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (Array.isArray(child)) append(parent, child);
    else if (child instanceof Node) parent.appendChild(child);
    else if (child !== null && child !== undefined && child !== false) parent.appendChild(document.createTextNode(String(child)));
  }
}

/** Replaces an element's content. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

let ids = 0;
/** A unique id for label/aria references. */
export const uid = (prefix: string) => `${prefix}-${++ids}`;

/** A polite live region that screen readers read out: confirmations after a write. */
export function announce(message: string): void {
  const region = document.getElementById('announcer');
  if (region) {
    region.textContent = '';
    // A fresh text node after clearing makes screen readers read a repeated message again.
    setTimeout(() => {
      region.textContent = message;
    }, 50);
  }
}
