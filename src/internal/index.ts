import type { FastifyInstance } from 'fastify';
import { adminGuard } from '../http/admin-auth';
import type { Services } from '../services';
import { attributionCodeRoutes } from './attribution-codes.routes';
import { attributionConnectionRoutes } from './attribution-connections.routes';
import { attributionDomainRoutes } from './attribution-domains.routes';
import { attributionLinkRoutes } from './attribution-links.routes';
import { brandRoutes } from './brands.routes';
import { campaignRoutes } from './campaigns.routes';
import { creatorRoutes } from './creators.routes';
import { placementRoutes } from './placements.routes';

/** /api/internal: the operators' API, every route behind the admin JWT (CONTRACT 3). */
export async function internalRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const opts = { services };
  app.addHook('onRequest', adminGuard(services.config.adminJwtSecret));
  await app.register(brandRoutes, opts);
  await app.register(creatorRoutes, opts);
  await app.register(campaignRoutes, opts);
  await app.register(placementRoutes, opts);
  await app.register(attributionDomainRoutes, opts);
  await app.register(attributionLinkRoutes, opts);
  await app.register(attributionCodeRoutes, opts);
  await app.register(attributionConnectionRoutes, opts);
}
