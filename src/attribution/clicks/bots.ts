import { isbot } from 'isbot';
import { rememberedText } from '../../bounded-map';

/**
 * Verdicts on recent user agents: a few thousand agents make most traffic, and isbot's list is one
 * large regex. Only ordinary-length agents are kept, so made-up long ones cannot fill memory.
 */
const isBotAgent = rememberedText(isbot, { maxEntries: 4096, maxLength: 512 });

/**
 * Whether a visit is a crawler's, a link preview's or a browser prefetch (`Sec-Purpose`/`Purpose:
 * prefetch`) rather than a person's, by the `isbot` package's list (kept current through npm). No
 * user agent counts as a person's.
 */
export function isBotVisit(userAgent: string | null | undefined, purpose?: string | null): boolean {
  if (purpose && /\bprefetch\b/i.test(purpose)) return true;
  return Boolean(userAgent?.trim()) && isBotAgent(userAgent!);
}
