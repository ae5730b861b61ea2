import type { FastifyInstance } from 'fastify';
import { adminGate } from '../http/admin-auth';
import { documentRoute } from '../http/openapi';
import { mountRoutes } from '../http/route';
import { attributionCodeRoutes } from './attribution-codes.routes';
import { attributionConnectionRoutes } from './attribution-connections.routes';
import { attributionDomainRoutes } from './attribution-domains.routes';
import { attributionLinkRoutes } from './attribution-links.routes';
import { brandRoutes } from './brands.routes';
import { campaignRoutes } from './campaigns.routes';
import { creatorRoutes } from './creators.routes';
import { webhookEndpointRoutes } from './webhook-endpoints.routes';
import type { InternalDeps } from './deps';
import { internalDocument } from './openapi';
import { placementRoutes } from './placements.routes';

/** /api/internal: the operators' API, every route (its OpenAPI document too) called with the admin JWT (auth 'admin', docs/api.md). */
export async function internalRoutes(app: FastifyInstance, deps: InternalDeps) {
  const routes = [
    ...brandRoutes(deps),
    ...creatorRoutes(deps),
    ...campaignRoutes(deps),
    ...placementRoutes(deps),
    ...attributionDomainRoutes(deps),
    ...attributionLinkRoutes(deps),
    ...attributionCodeRoutes(deps),
    ...attributionConnectionRoutes(deps),
    ...webhookEndpointRoutes(deps),
  ];
  const document = documentRoute(() => internalDocument(deps.publicBaseUrl, [...routes, document]), { isPublic: false });
  mountRoutes(app, [...routes, document], { auth: 'admin', gates: { admin: adminGate(deps.adminJwtSecret) }, queryErrors: 'invalid_request' });
}
