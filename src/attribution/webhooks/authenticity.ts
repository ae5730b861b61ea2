import type { IncomingHttpHeaders } from 'node:http';
import { safeEqual } from '../../secrets';
import { unauthenticated } from './connector';

/** Checks shared by the connectors' `authenticate` steps. */

/** A header's value as one string (Node joins most repeated headers; take the first otherwise). */
export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Static Authorization header values (RevenueCat, Adapty): the provider sends the value the
 * brand typed in its dashboard. With no value stored the unguessable URL token alone
 * authenticates (SPEC 5's baseline); otherwise the header must equal one of them, compared
 * in constant time. `acceptBearer` also accepts `Bearer <value>`.
 */
export function requireAuthorization(
  headers: IncomingHttpHeaders,
  stored: (string | null)[],
  { acceptBearer }: { acceptBearer: boolean },
): void {
  const secrets = stored.filter((s): s is string => !!s);
  if (secrets.length === 0) return;
  const sent = header(headers, 'authorization');
  if (sent === undefined) throw unauthenticated('authorization_missing');
  const candidates = acceptBearer && /^bearer /i.test(sent) ? [sent, sent.slice(7).trim()] : [sent];
  // Compare against every secret and candidate, so timing does not tell which one matched.
  let match = false;
  for (const secret of secrets) for (const c of candidates) match = safeEqual(c, secret) || match;
  if (!match) throw unauthenticated('authorization_mismatch');
}

/** Stripe and Shopify sign with a secret the brand pastes; without it nothing verifies. */
export function requireSigningSecret(secret: string | null): string {
  if (!secret) throw unauthenticated('signing_secret_missing');
  return secret;
}
