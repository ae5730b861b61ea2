import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/database';
import { HttpError } from '../http/errors';
import { newId, newToken, sha256 } from '../secrets';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `requirePortalSession`: the one brand this session may see. */
    portal?: PortalSession;
  }
}

export type PortalSession = { sessionId: string; userId: string; brandId: string };

export const SESSION_COOKIE = 'svc_session';
export const SESSION_TTL_MS = 12 * 3600_000;
const COOKIE_PATH = '/api/client';

/** Creates a session and sets its cookie; the token exists only in the cookie. */
export async function openSession(db: Db, reply: FastifyReply, user: { id: string; brand_id: string }) {
  const token = newToken('', 32);
  const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
  await db
    .insertInto('portal_sessions')
    .values({ id: newId(), token_hash: sha256(token), user_id: user.id, brand_id: user.brand_id, expires_at: expiresAt })
    .execute();
  reply.setCookie(SESSION_COOKIE, token, {
    path: COOKIE_PATH,
    httpOnly: true,
    sameSite: 'lax',
    secure: reply.request.protocol === 'https',
    expires: expiresAt,
  });
  return expiresAt;
}

/** Revokes the request's session (only that one) and clears the cookie. */
export async function closeSession(db: Db, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (req.portal) {
    await db.updateTable('portal_sessions').set({ revoked_at: new Date() }).where('id', '=', req.portal.sessionId).execute();
  }
  reply.clearCookie(SESSION_COOKIE, { path: COOKIE_PATH });
}

/** Looks the cookie's token up by hash: unknown, expired or revoked answers 401. */
export function portalSessionGuard(db: Db) {
  return async function requirePortalSession(req: FastifyRequest) {
    const token = req.cookies[SESSION_COOKIE];
    if (!token) throw new HttpError(401, { error: 'unauthorized' });
    const row = await db
      .selectFrom('portal_sessions')
      .select(['id', 'user_id', 'brand_id'])
      .where('token_hash', '=', sha256(token))
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', new Date())
      .executeTakeFirst();
    if (!row) throw new HttpError(401, { error: 'unauthorized' });
    req.portal = { sessionId: row.id, userId: row.user_id, brandId: row.brand_id };
  };
}

/**
 * Cookie-authenticated writes must come from the service's own origin: a browser
 * sends Origin on every cross-site POST, PATCH and DELETE, so a foreign one is refused.
 */
export function sameOriginGuard(publicBaseUrl: string) {
  const own = new URL(publicBaseUrl).origin;
  return async function requireSameOrigin(req: FastifyRequest) {
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return;
    const origin = req.headers.origin;
    const hostOrigin = `${req.protocol}://${req.headers.host}`;
    if (origin !== undefined && origin !== own && origin !== hostOrigin) {
      throw new HttpError(403, { error: 'forbidden_origin' });
    }
    if (origin === undefined && req.headers['sec-fetch-site'] === 'cross-site') {
      throw new HttpError(403, { error: 'forbidden_origin' });
    }
  };
}
