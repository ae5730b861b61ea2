import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { documentRoute } from '../http/openapi';
import { mountRoutes, type Route } from '../http/route';
import { appRoutes } from './apps.routes';
import { authRoutes } from './auth.routes';
import { codeRoutes } from './codes.routes';
import { connectionRoutes } from './connections.routes';
import type { PortalDeps } from './deps';
import { domainRoutes } from './domains.routes';
import { eventRoutes } from './events.routes';
import { linkRoutes } from './links.routes';
import { loginLimits } from './login-limit';
import { portalDocument } from './openapi';
import { overviewRoutes } from './overview.routes';
import { enforceRateLimit } from '../http/rate-limit';
import { PortalSessions, portalSessionGuard, sameOriginGuard, startSessionPurge } from './session';
import { setupRoutes } from './setup.routes';
import { webhookRoutes } from './webhooks.routes';

/**
 * /api/client: the brand portal. Every route but login and the OpenAPI document needs a
 * session scoped to one brand (`req.portal.brandId`, the only brand a query may touch), and
 * cookie-authenticated writes must come from our origin.
 */
export async function portalRoutes(app: FastifyInstance, deps: PortalDeps) {
  const sessions = new PortalSessions(deps.db, deps.recordChanges);
  const requireSession = portalSessionGuard(sessions);
  const stopPurge = startSessionPurge(sessions, (err) => deps.log.warn({ err }, 'could not purge ended portal sessions'));
  app.addHook('onClose', async () => stopPurge());
  // Each session's requests a minute (RATE_LIMIT_PORTAL), counted once the session is known.
  const openSession = async (req: FastifyRequest, reply: FastifyReply) => {
    await requireSession(req);
    await enforceRateLimit(reply, deps.rateLimiter, 'portal', req.portal!.sessionId);
  };
  const sections: { prefix: string; routes: Route[] }[] = [];
  const mount = (scope: FastifyInstance, routes: Route[]) => {
    sections.push({ prefix: scope.prefix, routes });
    mountRoutes(scope, routes, {
      context: async (req, reply, r) => (r.public ? undefined : openSession(req, reply)),
      queryErrors: 'invalid_parameter',
    });
  };

  await app.register(cookie); // the session cookie: this plugin's routes only
  app.addHook('onRequest', sameOriginGuard(deps.publicBaseUrl));
  mount(app, [documentRoute(() => portalDocument(deps.publicBaseUrl, sections))]);
  await app.register(
    async (auth) => {
      const limits = await loginLimits(auth, deps.redis, deps.loginLimitPrefix, deps.secretKey);
      mount(auth, authRoutes({ db: deps.db, sessions, secureCookie: deps.publicBaseUrl.startsWith('https:') }, limits));
    },
    { prefix: '/auth' },
  );
  // One list of routes per portal resource (SPEC 4.4), each reading req.portal.brandId.
  await app.register(
    async (attribution) =>
      mount(attribution, [
        ...overviewRoutes(deps),
        ...linkRoutes(deps),
        ...codeRoutes(deps),
        ...eventRoutes(deps),
        ...setupRoutes(deps),
        ...appRoutes(deps),
        ...domainRoutes(deps),
        ...connectionRoutes(deps),
        ...webhookRoutes(deps),
      ]),
    { prefix: '/attribution' },
  );
}
