import { z } from 'zod';

/** Schemes a deep link may never use: web pages open in the browser, the others run or read things. */
const REFUSED_SCHEMES = new Set(['http', 'javascript', 'data', 'file', 'vbscript', 'blob', 'about']);

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):(.+)$/s;
// C0, DEL and C1 controls (a CR/LF would split a header or a log line wherever the value is echoed).
const CONTROL = /\p{Cc}/u;

export const MAX_DEEP_LINK = 2048;

/**
 * Whether trimmed `value` is a deep link (docs/api.md, "deep_link"): a path starting with one `/`
 * (`//` and `/\` are other hosts to a browser), or an absolute URL whose scheme is https or an
 * app's own, never a scheme that runs code or reads files; no control characters, ≤ 2,048.
 */
export function isDeepLink(value: string): boolean {
  if (!value || value.length > MAX_DEEP_LINK || CONTROL.test(value)) return false;
  if (value.startsWith('/')) return !value.startsWith('//') && !value.startsWith('/\\');
  const m = SCHEME.exec(value);
  if (!m) return false;
  const scheme = m[1]!.toLowerCase();
  if (REFUSED_SCHEMES.has(scheme)) return false;
  if (scheme !== 'https') return true;
  try {
    return new URL(value).hostname !== '';
  } catch {
    return false;
  }
}

export const DEEP_LINK_RULE = 'a path starting with one /, or an https or app URL (not http, javascript, data, file, vbscript, blob or about), at most 2,048 characters';

/** A link's `deep_link` as stored: trimmed, then checked (isDeepLink). */
export const deepLinkSchema = z
  .string()
  .transform((s) => s.trim())
  .refine(isDeepLink, DEEP_LINK_RULE)
  .describe('Where an installed app opens on this link: a path (/recipes/42) or an https or app URL (acme://recipes/42); null for none');
