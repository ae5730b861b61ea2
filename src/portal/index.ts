import type { FastifyInstance } from 'fastify';
import type { Services } from '../services';
import { authRoutes } from './auth.routes';
import { codeRoutes } from './codes.routes';
import { connectionRoutes } from './connections.routes';
import { domainRoutes } from './domains.routes';
import { eventRoutes } from './events.routes';
import { linkRoutes } from './links.routes';
import { openApiRoutes } from './openapi';
import { overviewRoutes } from './overview.routes';
import { portalSessionGuard, sameOriginGuard } from './session';
import { setupRoutes } from './setup.routes';

/**
 * /api/client: the brand portal. Every route but login and the OpenAPI document needs a
 * session scoped to one brand (`req.portal.brandId`, the only brand a query may touch), and
 * cookie-authenticated writes must come from our origin.
 */
export async function portalRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const opts = { services };
  app.addHook('onRequest', sameOriginGuard(services.config.publicBaseUrl));
  await app.register(authRoutes, { ...opts, prefix: '/auth' });
  await app.register(openApiRoutes, { publicBaseUrl: services.config.publicBaseUrl });
  await app.register(
    async (attribution) => {
      attribution.addHook('preHandler', portalSessionGuard(services.db));
      // One plugin per portal resource (SPEC 4.4), each reading req.portal.brandId.
      await attribution.register(overviewRoutes, opts);
      await attribution.register(linkRoutes, opts);
      await attribution.register(codeRoutes, opts);
      await attribution.register(eventRoutes, opts);
      await attribution.register(setupRoutes, opts);
      await attribution.register(domainRoutes, opts);
      await attribution.register(connectionRoutes, opts);
    },
    { prefix: '/attribution' },
  );
}
