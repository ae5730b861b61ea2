import type { FastifyInstance } from 'fastify';
import type { Services } from '../services';
import { authRoutes } from './auth.routes';
import { portalSessionGuard, sameOriginGuard } from './session';

/**
 * /api/client: the brand portal. Every route needs a session scoped to one brand
 * (`req.portal.brandId`), and cookie-authenticated writes must come from our origin.
 */
export async function portalRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const opts = { services };
  app.addHook('onRequest', sameOriginGuard(services.config.publicBaseUrl));
  await app.register(authRoutes, { ...opts, prefix: '/auth' });
  await app.register(
    async (attribution) => {
      attribution.addHook('preHandler', portalSessionGuard(services.db));
      // One plugin per portal resource (SPEC 4.4), each reading req.portal.brandId.
    },
    { prefix: '/attribution' },
  );
}
