import { isbot } from 'isbot';
import { BoundedMap, ownString } from '../../bounded-map';

/**
 * Verdicts on recent user agents: a few thousand agents make most traffic, and isbot's list is one
 * large regex. Only ordinary-length agents are kept, so made-up long ones cannot fill memory.
 */
const verdicts = new BoundedMap<string, boolean>({ maxEntries: 4096 });
const MAX_KEPT_AGENT = 512;

function isBotAgent(userAgent: string): boolean {
  if (userAgent.length > MAX_KEPT_AGENT) return isbot(userAgent);
  let verdict = verdicts.get(userAgent);
  if (verdict === undefined) {
    verdict = isbot(userAgent);
    verdicts.set(ownString(userAgent), verdict);
  }
  return verdict;
}

/**
 * Whether a visit is a crawler's, a link preview's or a browser prefetch (`Sec-Purpose`/`Purpose:
 * prefetch`) rather than a person's, by the `isbot` package's list (kept current through npm). No
 * user agent counts as a person's.
 */
export function isBotVisit(userAgent: string | null | undefined, purpose?: string | null): boolean {
  if (purpose && /\bprefetch\b/i.test(purpose)) return true;
  return Boolean(userAgent?.trim()) && isBotAgent(userAgent!);
}
