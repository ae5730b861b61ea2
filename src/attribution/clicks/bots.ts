import { isbot } from 'isbot';

/**
 * Whether a visit is a crawler's, a link preview's or a browser prefetch (`Sec-Purpose`/`Purpose:
 * prefetch`) rather than a person's, by the `isbot` package's list (kept current through npm). No
 * user agent counts as a person's.
 */
export function isBotVisit(userAgent: string | null | undefined, purpose?: string | null): boolean {
  if (purpose && /\bprefetch\b/i.test(purpose)) return true;
  return Boolean(userAgent?.trim()) && isbot(userAgent);
}
