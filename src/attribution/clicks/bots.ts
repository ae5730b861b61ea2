import { isbot } from 'isbot';

/**
 * Whether a visit is a crawler's, a link-preview fetcher's or a browser's prefetch rather
 * than a person's. The user-agent list is the `isbot` package's (kept current through npm);
 * a visit without a user agent counts as a person's. `Sec-Purpose`/`Purpose: prefetch`
 * (and `prefetch;prerender`) mark a page a browser fetched before anyone chose it.
 */
export function isBotVisit(userAgent: string | null | undefined, purpose?: string | null): boolean {
  if (purpose && /\bprefetch\b/i.test(purpose)) return true;
  return Boolean(userAgent?.trim()) && isbot(userAgent);
}
