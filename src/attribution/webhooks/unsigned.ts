import type { Provider } from '../ledger/types';

/**
 * What a connection without a signing secret allows, said plainly before a brand connects (the
 * setup card) and after (the connection's warning): docs/webhooks.md, "Connections without a
 * signing secret".
 */
const OPEN_URL = (dashboard: string) =>
  `anyone who has the webhook URL (its svw_ token) can post events for your brand (purchases, renewals and refunds of up to 1,000,000,000 each), and they are counted. Set an Authorization header value in ${dashboard} and paste the same value here.`;
const REFUSED = (what: string) => `every delivery is refused (401) and nothing is recorded until you paste ${what} here.`;

const WITHOUT: Record<Provider, string | null> = {
  revenuecat: OPEN_URL('RevenueCat'),
  adapty: OPEN_URL('Adapty (production endpoint)'),
  stripe: REFUSED("the endpoint's signing secret from Stripe"),
  shopify: REFUSED('the shop webhook key'),
  apple: null,
};

/** The setup card's sentence: what connecting without a secret allows; null when the provider takes none (Apple). */
export function withoutSecret(provider: Provider): string | null {
  const what = WITHOUT[provider];
  return what === null ? null : `Without a signing secret, ${what}`;
}

/**
 * The warning a connection answers while no secret authenticates its deliveries (Adapty: neither
 * the production nor the sandbox value); null once one is stored, or for Apple.
 */
export function unsignedWarning(provider: Provider, stored: { signing: boolean; sandbox: boolean }): string | null {
  const what = WITHOUT[provider];
  if (what === null || stored.signing || (provider === 'adapty' && stored.sandbox)) return null;
  return `No signing secret is set: ${what}`;
}
