import type { FastifyRequest } from 'fastify';

/** The origin (`scheme://host[:port]`) of a URL, e.g. a Referer; undefined when it is none. */
export function originOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/**
 * Whether an origin is this service's: PUBLIC_BASE_URL's, or the one the request was addressed to
 * (its own scheme and Host, as when an operator opens the service by another name). The portal's
 * and the queue board's writes are refused from any other (docs/hardening.md).
 */
export function ownOrigin(publicBaseUrl: string) {
  const own = new URL(publicBaseUrl).origin;
  return (req: FastifyRequest, origin: string | undefined): boolean =>
    origin !== undefined && (origin === own || origin === `${req.protocol}://${req.headers.host}`);
}
