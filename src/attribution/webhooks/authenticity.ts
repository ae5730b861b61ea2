import type { IncomingHttpHeaders } from 'node:http';
import { bearerToken, safeEqual } from '../../secrets';
import { unauthenticated } from './connector';

/** Checks shared by the connectors' `authenticate` steps. */

/** A header's value as one string (Node joins most repeated headers; take the first otherwise). */
export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Static Authorization values (RevenueCat, Adapty): with none stored the URL token alone
 * authenticates; otherwise the header (or `Bearer <value>` with `acceptBearer`) must equal
 * one, in constant time. Answers, per stored value, whether it matched.
 */
export function requireAuthorization(
  headers: IncomingHttpHeaders,
  stored: (string | null)[],
  { acceptBearer }: { acceptBearer: boolean },
): boolean[] {
  const matched = stored.map(() => false);
  if (stored.every((s) => !s)) return matched;
  const sent = header(headers, 'authorization');
  if (sent === undefined) throw unauthenticated('authorization_missing');
  const bearer = acceptBearer ? bearerToken(sent) : undefined;
  const candidates = bearer ? [sent, bearer] : [sent];
  // Compare against every secret and candidate, so timing does not tell which one matched.
  stored.forEach((secret, i) => {
    if (secret) for (const c of candidates) matched[i] = safeEqual(c, secret) || matched[i]!;
  });
  if (!matched.includes(true)) throw unauthenticated('authorization_mismatch');
  return matched;
}

/**
 * Stripe and Shopify sign with a secret the brand pastes; without it nothing verifies. Answers
 * that secret and the signature header's value, or refuses a delivery that has none.
 */
export function signedDelivery(headers: IncomingHttpHeaders, secret: string | null, signatureHeader: string) {
  if (!secret) throw unauthenticated('signing_secret_missing');
  const sent = header(headers, signatureHeader);
  if (!sent) throw unauthenticated('signature_missing');
  return { secret, sent };
}
