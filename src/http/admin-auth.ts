import { createSigner, createVerifier } from 'fast-jwt';
import type { FastifyRequest } from 'fastify';
import { bearerToken } from '../secrets';
import { refuse } from '../refusal';

/** Admin JWTs (docs/api.md#internal-set-up-endpoints): HS256, claim user_typ "svc", one hour. */
export function signAdminToken(secret: string, subject = 'operator'): string {
  const sign = createSigner({ key: secret, algorithm: 'HS256', expiresIn: 3600_000 });
  return sign({ sub: subject, user_typ: 'svc' });
}

export type AdminClaims = { sub?: string; user_typ?: string; iat?: unknown; exp?: unknown };

/** The longest an admin JWT may live (docs/hardening.md#admin-jwts-and-the-queue-board), from its `iat` (or from now without one). */
export const MAX_ADMIN_TOKEN_SECONDS = 24 * 3600;

/** How far ahead of this server's clock a token's `iat` may be (clocks differ a little). */
const CLOCK_SKEW_SECONDS = 60;

/**
 * Whether a verified token's lifetime is bounded: `exp` present and at most 24 hours after
 * `iat`, which is not in the future. Without `iat` it is measured from now, so a stolen token
 * lives a day at most (a future `iat` would let `exp` lie years ahead).
 */
function boundedLifetime(claims: AdminClaims): boolean {
  if (typeof claims.exp !== 'number' || !Number.isFinite(claims.exp)) return false;
  const now = Date.now() / 1000;
  const from = typeof claims.iat === 'number' && Number.isFinite(claims.iat) ? claims.iat : now;
  return from <= now + CLOCK_SKEW_SECONDS && claims.exp - from <= MAX_ADMIN_TOKEN_SECONDS;
}

/**
 * Builds a verifier of admin tokens: the claims, or 401 without a valid, bounded token and 403
 * when it is not an operator's.
 */
export function adminTokenVerifier(secret: string) {
  const verify = createVerifier({ key: secret, algorithms: ['HS256'], cache: 1000 });
  return function verifyAdminToken(token: string | null | undefined): AdminClaims {
    if (!token) throw refuse(401, 'unauthorized');
    let claims: AdminClaims;
    try {
      claims = verify(token) as AdminClaims;
    } catch {
      throw refuse(401, 'unauthorized');
    }
    if (!boundedLifetime(claims)) throw refuse(401, 'unauthorized');
    if (claims.user_typ !== 'svc') throw refuse(403, 'forbidden');
    return claims;
  };
}

/**
 * The admin JWT a request carries: as Bearer. Where a browser cannot send one (the queue board),
 * `?<query>=` first, then Bearer, then its cookie; nowhere else does the cookie stand for the header.
 */
export function adminTokenOf(req: FastifyRequest, browser?: { query: string; cookie: string }): string | undefined {
  const bearer = bearerToken(req.headers.authorization);
  if (!browser) return bearer;
  const fromQuery = (req.query as Record<string, unknown> | undefined)?.[browser.query];
  return typeof fromQuery === 'string' ? fromQuery : (bearer ?? req.cookies?.[browser.cookie]);
}

/**
 * The gate of auth 'admin' (src/http/route.ts): the token's claims (adminTokenOf), checked before
 * the body is read; 401 without a valid token, 403 when it is not an operator's.
 */
export function adminGate(secret: string, browser?: { query: string; cookie: string }) {
  const verifyAdminToken = adminTokenVerifier(secret);
  return { at: 'request' as const, resolve: async (req: FastifyRequest) => verifyAdminToken(adminTokenOf(req, browser)) };
}
