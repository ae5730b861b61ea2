import { z } from 'zod';
import type { Db } from '../db/database';
import { refuse } from '../refusal';
import { route } from '../http/route';
import { hashPassword, passwordNeedsRehash, unmatchableHash, verifyPassword } from '../secrets';
import { sessionNames, setPasswordHash, userByEmail } from './auth.queries';
import type { LoginLimits } from './login-limit';
import { errorSchema } from './schemas';
import { closeSession, openSession, type PortalSessions } from './session';

const loginBody = z.object({ email: z.string().trim().min(1).max(320), password: z.string().min(1).max(1000) });
const sessionAnswer = z.object({
  user: z.object({ id: z.string(), email: z.string() }),
  brand: z.object({ id: z.string(), name: z.string() }),
});
const unauthorized = errorSchema('unauthorized');


/**
 * POST /api/client/auth/login (rate limited: ./login-limit.ts), /logout and GET /me. `secureCookie`:
 * the session cookie is Secure (PUBLIC_BASE_URL is https).
 */
export const authRoutes = ({ db, sessions, secureCookie }: { db: Db; sessions: PortalSessions; secureCookie: boolean }, limits: LoginLimits) => [
  route({
    method: 'POST',
    path: '/login',
    summary: 'Log in with email and password; sets the HttpOnly session cookie svc_session',
    body: loginBody,
    public: true,
    responses: {
      200: sessionAnswer.extend({ expires_at: z.iso.datetime() }),
      401: errorSchema('invalid_credentials'),
      403: errorSchema('forbidden_origin'),
      422: errorSchema('invalid_request'),
      429: errorSchema('rate_limited: too many failed logins for this account from this address, or from this address; see Retry-After'),
    },
    async handler({ body, req, reply }) {
      await limits.take(req, reply);
      let user: Awaited<ReturnType<typeof userByEmail>>;
      let ok: boolean;
      try {
        user = await userByEmail(db, body.email);
        // An unknown email costs a hash too, so both failures take as long.
        ok = await verifyPassword(body.password, user?.password_hash ?? unmatchableHash());
      } catch (err) {
        // Only a wrong password costs an attempt: a Postgres outage must not lock out whoever kept trying.
        await limits.giveBack(req).catch(() => {});
        throw err;
      }
      if (!user || !ok) {
        // The 401 stands even if Redis fails here: the attempt is already counted.
        await limits.failed(req).catch(() => {});
        throw refuse(401, 'invalid_credentials');
      }
      await limits.giveBack(req);
      // A hash made with older, cheaper parameters is made again now that the password is known.
      if (passwordNeedsRehash(user.password_hash)) await setPasswordHash(db, user.id, user.password_hash, await hashPassword(body.password));
      const expiresAt = await openSession(db, reply, user, secureCookie);
      return {
        user: { id: user.id, email: user.email },
        brand: { id: user.brand_id, name: user.brand_name },
        expires_at: expiresAt.toISOString(),
      };
    },
  }),
  route({
    method: 'POST',
    path: '/logout',
    auth: 'session',
    summary: 'End this session (only this one) and clear its cookie',
    responses: { 200: z.object({ ok: z.literal(true) }), 401: unauthorized, 403: errorSchema('forbidden_origin') },
    async handler({ reply }, session) {
      await closeSession(sessions, session, reply);
      return { ok: true };
    },
  }),
  route({
    method: 'GET',
    auth: 'session',
    path: '/me',
    summary: "The session's user and brand",
    responses: { 200: sessionAnswer, 401: unauthorized },
    async handler(_input, portal) {
      const row = await sessionNames(db, portal.userId);
      return { user: { id: portal.userId, email: row.email }, brand: { id: portal.brandId, name: row.name } };
    },
  }),
];
