import { z } from 'zod';

/**
 * Text the stores cannot hold (docs/hardening.md#text-the-stores-cannot-hold): NUL (Postgres text) and a lone UTF-16 surrogate
 * (jsonb; node-pg would turn it into U+FFFD). One check for bodies, query strings, path ids, cursors
 * and the ledger's drafts.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const isStorableText = (text: string): boolean => !text.includes('\u0000') && !LONE_SURROGATE.test(text);

/** Whether every string of a parsed JSON value, keys included, is storable. Iterative: nesting depth cannot overflow the stack. */
export function isStorableValue(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length) {
    const v = pending.pop();
    if (typeof v === 'string') {
      if (!isStorableText(v)) return false;
    } else if (Array.isArray(v)) {
      for (const item of v) pending.push(item); // not push(...v): a huge array would overflow the argument list
    } else if (v !== null && typeof v === 'object') {
      for (const [key, item] of Object.entries(v)) {
        if (!isStorableText(key)) return false;
        pending.push(item);
      }
    }
  }
  return true;
}

/**
 * A URL the stores keep (logos, link destinations, store pages, placements and thumbnails): an absolute http(s) URL
 * with a host and no space or control character, so no `javascript:`, `data:` or header-breaking
 * CRLF reaches a page, a redirect or an answer (docs/api.md).
 */
export const storedUrl = (max = 2048) =>
  z
    .string()
    .max(max)
    .refine(isStorableUrl, 'must be an absolute http(s) URL without spaces or control characters')
    .meta({ format: 'uri' });

function isStorableUrl(value: string): boolean {
  // Checked on the text: the URL parser silently drops tabs and newlines and trims spaces.
  if (!/^https?:\/\/[^/?#]/i.test(value) || /[\s\p{Cc}]/u.test(value)) return false;
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}
