import { domainToASCII } from 'node:url';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * A vanity domain as stored and matched: lower-case ASCII (xn-- form), no trailing dot, no leading
 * `www.` (the click endpoint receives hosts without it). Null when the input is not a
 * fully qualified host name (a URL, an IP address, a single label).
 */
export function normalizeHostname(input: string): string | null {
  const trimmed = input.trim().toLowerCase();
  // domainToASCII would cut `x.example/path` to `x.example`: refuse anything but name characters.
  if (!/^[\p{L}\p{M}\p{N}.-]+$/u.test(trimmed)) return null;
  let host = domainToASCII(trimmed);
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host.startsWith('www.')) host = host.slice(4);
  if (host.length === 0 || host.length > 253) return null;
  const labels = host.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return null;
  // A numeric last label means an IP address, not a name that can carry DNS records.
  if (/^\d+$/.test(labels.at(-1)!)) return null;
  return host;
}

/**
 * The service's own host (PUBLIC_BASE_URL's, normalized as domains are): never an attribution
 * domain, or every API request sent to it would be answered as a link visit. Null for an IP address.
 */
export function serviceHostname(publicBaseUrl: string): string | null {
  return normalizeHostname(new URL(publicBaseUrl).hostname);
}

/**
 * Whether a brand may claim `host` (normalized) in the portal: never the service's own host,
 * `localhost` or a name under it (browsers send those to the visitor's own machine), nor a name the
 * operator reserved (RESERVED_HOSTNAMES). IP literals and single labels never normalize.
 */
export function claimableHostname(host: string, publicBaseUrl: string, reserved: readonly string[] = []): boolean {
  if (host === serviceHostname(publicBaseUrl)) return false;
  if (host === 'localhost' || host.endsWith('.localhost')) return false;
  return !reserved.some((name) => normalizeHostname(name) === host);
}
