import { createSigner, createVerifier } from 'fast-jwt';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken } from './bearer';
import { HttpError } from './errors';

/** Admin JWTs (CONTRACT 3): HS256, claim user_typ "svc", one hour. */
export function signAdminToken(secret: string, subject = 'operator'): string {
  const sign = createSigner({ key: secret, algorithm: 'HS256', expiresIn: 3600_000 });
  return sign({ sub: subject, user_typ: 'svc' });
}

export type AdminClaims = { sub?: string; user_typ?: string };

/** Builds a preHandler: 401 without a valid token, 403 when it is not an operator's. */
export function adminGuard(secret: string) {
  const verify = createVerifier({ key: secret, algorithms: ['HS256'], cache: 1000 });
  return async function requireAdmin(req: FastifyRequest, _reply: FastifyReply) {
    const token = bearerToken(req.headers.authorization);
    if (!token) throw new HttpError(401, { error: 'unauthorized' });
    let claims: AdminClaims;
    try {
      claims = verify(token) as AdminClaims;
    } catch {
      throw new HttpError(401, { error: 'unauthorized' });
    }
    if (claims.user_typ !== 'svc') throw new HttpError(403, { error: 'forbidden' });
  };
}
