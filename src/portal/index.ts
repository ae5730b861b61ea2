import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
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
import { PortalSessions, sameOriginGuard, sessionGate, startSessionPurge } from './session';
import { setupRoutes } from './setup.routes';
import { webhookRoutes } from './webhooks.routes';

/**
 * /api/client: the brand portal. Every route but login and the OpenAPI document is called with a
 * session scoped to one brand (auth 'session': its handler is given the session, whose brandId is
 * the only brand a query may touch), and cookie-authenticated writes must come from our origin.
 */
export async function portalRoutes(app: FastifyInstance, deps: PortalDeps) {
  const sessions = new PortalSessions(deps.db, deps.recordChanges);
  const gates = { session: sessionGate(sessions, deps.rateLimiter) };
  const stopPurge = startSessionPurge(sessions, (err) => deps.log.warn({ err }, 'could not purge ended portal sessions'));
  app.addHook('onClose', async () => stopPurge());
  const sections: { prefix: string; routes: Route[] }[] = [];
  const mount = (scope: FastifyInstance, routes: Route[]) => {
    sections.push({ prefix: scope.prefix, routes });
    // Each session's requests a minute (limit 'portal', RATE_LIMIT_PORTAL) on every route it calls.
    mountRoutes(scope, routes, { auth: 'session', limits: ['portal'], gates, rateLimiter: deps.rateLimiter, queryErrors: 'invalid_parameter' });
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
  // One list of routes per portal resource (docs/api.md#endpoints-apiclientattribution), each given its session (the brand it may read).
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
