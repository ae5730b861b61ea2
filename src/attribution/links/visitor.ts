import { addressKey } from '../../client-address';
import { keyedHash } from '../../secrets';

/** What a click tells about the visitor: device platform, country, campaign (UTM) values, IP. */

export type DevicePlatform = 'ios' | 'android' | 'desktop';

/** ios for iPhone, iPad and iPod; android; desktop for any other agent; null without a user agent. */
export function platformFromUserAgent(userAgent: string | null | undefined): DevicePlatform | null {
  const ua = userAgent?.trim();
  if (!ua) return null;
  if (/iPhone|iPad|iPod/.test(ua)) return 'ios';
  if (/Android/i.test(ua)) return 'android';
  return 'desktop';
}

/** A two-letter country code in upper case, or '' for anything else. */
export function countryCode(value: string | null | undefined): string {
  const code = (value ?? '').trim().toUpperCase();
  return /^[A-Z]{2}$/.test(code) ? code : '';
}

export const UTM_KEYS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] as const;
export type Utm = Record<(typeof UTM_KEYS)[number], string>;

const MAX_UTM_LENGTH = 512;

/** The UTM values of an incoming query string (with or without `?`); absent ones are ''. */
export function utmFromQuery(query: string | null | undefined): Utm {
  const params = new URLSearchParams(query ?? '');
  const utm = {} as Utm;
  for (const key of UTM_KEYS) utm[key] = (params.get(key) ?? '').trim().slice(0, MAX_UTM_LENGTH);
  return utm;
}

/**
 * `url` with the given query parameters set (empty values skipped). The click's values
 * replace the destination's own, because they describe the visit being forwarded.
 * A destination that is not an absolute URL is answered unchanged.
 */
export function withQueryParams(url: string, params: Record<string, string>): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  // One query rewrite: each URL.searchParams.set would serialize the whole URL again.
  const search = new URLSearchParams(parsed.search);
  let changed = false;
  for (const [key, value] of Object.entries(params)) {
    if (!value) continue;
    search.set(key, value);
    changed = true;
  }
  if (changed) parsed.search = search.toString();
  return parsed.toString();
}

/** The `id` query parameter of a Play-style store URL: the Android package name. */
export function androidPackage(androidUrl: string | null): string | null {
  if (!androidUrl) return null;
  try {
    return new URL(androidUrl).searchParams.get('id') || null;
  } catch {
    return null;
  }
}

/**
 * The visitor's IP as a keyed HMAC (SECRET_KEY), never the address itself, keyed as every
 * IP-keyed count is (addressKey): an IPv6 client by its /64, and IPv4-mapped IPv6 addresses
 * (`::ffff:1.2.3.4`) as their IPv4 form, so the redirect app's view of a visitor and the install
 * request's socket address compare equal.
 */
export function ipHash(secret: string, ip: string | null | undefined): string {
  const address = ip?.trim() ? addressKey(ip) : '';
  return address ? keyedHash(secret, `ip:${address}`) : '';
}
