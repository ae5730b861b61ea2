import type { FastifyReply, FastifyRequest } from 'fastify';
import { BoundedMap } from '../bounded-map';
import type { Db } from '../db/database';
import { EVERY_BRAND, type RecordChanges } from '../reads/changes';
import { refuse } from '../refusal';
import { enforceRateLimit, type RateLimiter, type RateLimitKind } from '../http/rate-limit';
import type { Gate } from '../http/route';
import { originOf, ownOrigin } from '../http/same-origin';
import { newId, newToken, sha256 } from '../secrets';

declare module '../http/route' {
  interface Callers {
    /** A portal session: the one brand it may see (auth 'session'). */
    session: PortalSession;
  }
}

export type PortalSession = { sessionId: string; userId: string; brandId: string };

export const SESSION_COOKIE = 'svc_session';
export const SESSION_TTL_MS = 12 * 3600_000;
const COOKIE_PATH = '/api/client';

/**
 * Creates a session and sets its cookie; the token exists only in the cookie. The cookie is Secure
 * whenever the service's public address (PUBLIC_BASE_URL) is https, whatever protocol reached this
 * process (behind a TLS proxy not named in TRUST_PROXY the request itself looks like http).
 */
export async function openSession(db: Db, reply: FastifyReply, user: { id: string; brand_id: string }, secure: boolean) {
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
    secure,
    expires: expiresAt,
  });
  return expiresAt;
}

/** Revokes the request's session (only that one) and clears the cookie. */
export async function closeSession(sessions: PortalSessions, session: PortalSession, reply: FastifyReply): Promise<void> {
  await sessions.revoke(session);
  reply.clearCookie(SESSION_COOKIE, { path: COOKIE_PATH });
}

type KnownSession = { session: PortalSession; validUntil: number; version: string };

/** A kept session is read again after this long, even if no notice came (a lost notice, triggers off). */
const KEPT_MS = 60_000;

/**
 * Sessions by their token's hash. A session read is kept in memory while the change feed is live,
 * for a minute at most and never past its expiry, until any session is revoked or deleted anywhere
 * (`sessions *`, migrations/0012): a portal request then costs no Postgres round trip. Unknown
 * tokens are never kept.
 */
export class PortalSessions {
  private readonly known = new BoundedMap<string, KnownSession>({ maxEntries: 10_000 });

  constructor(
    private readonly db: Db,
    private readonly changes: RecordChanges,
  ) {}

  /** The live session of this cookie token; undefined when it is unknown, expired or revoked. */
  async byToken(token: string): Promise<PortalSession | undefined> {
    const hash = sha256(token);
    const now = Date.now();
    const hit = this.known.get(hash);
    if (hit && hit.validUntil > now && this.changes.live && hit.version === this.version()) {
      this.known.touch(hash);
      return hit.session;
    }
    // Taken before the read: a revocation notified while it runs leaves the entry stale.
    const version = this.version();
    const row = await this.db
      .selectFrom('portal_sessions')
      .select(['id', 'user_id', 'brand_id', 'expires_at'])
      .where('token_hash', '=', hash)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', new Date(now))
      .executeTakeFirst();
    if (!row) {
      this.known.delete(hash);
      return undefined;
    }
    const session = { sessionId: row.id, userId: row.user_id, brandId: row.brand_id };
    if (this.changes.live) this.known.set(hash, { session, validUntil: Math.min(row.expires_at.getTime(), now + KEPT_MS), version });
    return session;
  }

  /** Revokes one session: refused here at once, and by other processes when the notice reaches them. */
  async revoke(session: PortalSession): Promise<void> {
    await this.db.updateTable('portal_sessions').set({ revoked_at: new Date() }).where('id', '=', session.sessionId).execute();
    this.changes.changed('sessions', 'every brand');
  }

  /**
   * Deletes expired and revoked sessions, `batch` rows a statement until none is left (a short lock
   * each); answers how many. Run periodically (startSessionPurge). Deleted rows are refused as
   * revoked ones were: no notice is needed.
   */
  async purgeEnded(batch = 1000): Promise<number> {
    let purged = 0;
    for (;;) {
      const ended = this.db
        .selectFrom('portal_sessions')
        .select('id')
        .where((eb) => eb.or([eb('expires_at', '<=', new Date()), eb('revoked_at', 'is not', null)]))
        .limit(batch);
      const { numDeletedRows } = await this.db.deleteFrom('portal_sessions').where('id', 'in', ended).executeTakeFirst();
      purged += Number(numDeletedRows);
      if (Number(numDeletedRows) < batch) return purged;
    }
  }

  /** Moves with every `sessions` notice and every reconnection of the feed. */
  private version(): string {
    return this.changes.version('sessions', EVERY_BRAND);
  }
}

/**
 * The gate of auth 'session' (src/http/route.ts), once the body is read: the cookie's session
 * (PortalSessions; unknown, expired or revoked answers 401), then its requests a minute
 * (RATE_LIMIT_PORTAL), counted once the session is known.
 */
export function sessionGate(sessions: PortalSessions, rateLimiter: RateLimiter): Gate<'session'> {
  return {
    at: 'handler',
    limits: ['portal'],
    async resolve(req: FastifyRequest, reply: FastifyReply, limits: RateLimitKind[]) {
      const token = req.cookies[SESSION_COOKIE];
      const session = token ? await sessions.byToken(token) : undefined;
      if (!session) throw refuse(401, 'unauthorized');
      if (limits.includes('portal')) await enforceRateLimit(reply, rateLimiter, 'portal', session.sessionId);
      return session;
    },
  };
}

/** How often each process deletes ended sessions (PortalSessions.purgeEnded). */
export const SESSION_PURGE_EVERY_MS = 10 * 60_000;

/** Purges ended sessions now and every SESSION_PURGE_EVERY_MS; answers the function that stops it. */
export function startSessionPurge(sessions: PortalSessions, onError: (err: unknown) => void): () => void {
  const purge = () => void sessions.purgeEnded().catch(onError);
  const first = setTimeout(purge, 5_000).unref();
  const timer = setInterval(purge, SESSION_PURGE_EVERY_MS).unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}

/**
 * Cookie-authenticated writes must come from the service's own origin: a browser sends Origin on
 * every cross-site POST, PATCH and DELETE, so a foreign one is refused; a write with a session
 * cookie and no Origin is refused unless its Referer is this service's (docs/hardening.md).
 */
export function sameOriginGuard(publicBaseUrl: string) {
  const isOwn = ownOrigin(publicBaseUrl);
  return async function requireSameOrigin(req: FastifyRequest) {
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return;
    const origin = req.headers.origin;
    if (origin !== undefined && !isOwn(req, origin)) {
      throw refuse(403, 'forbidden_origin');
    }
    if (origin === undefined && req.headers['sec-fetch-site'] === 'cross-site') {
      throw refuse(403, 'forbidden_origin');
    }
    // Login carries no session: its guesses are limited apart (./login-limit.ts).
    if (origin === undefined && req.cookies?.[SESSION_COOKIE] !== undefined && !isOwn(req, originOf(req.headers.referer))) {
      throw refuse(403, 'forbidden_origin');
    }
  };
}

