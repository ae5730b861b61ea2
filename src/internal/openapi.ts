import { openApiDocument, unavailable } from '../http/openapi';
import type { Route } from '../http/route';

/** GET /api/internal/openapi.json (behind the admin JWT): the operators' API, from its route descriptors. */
export function internalDocument(publicBaseUrl: string, routes: Route[]) {
  return openApiDocument({
    info: {
      title: 'svc internal API',
      version: '1.0.0',
      description:
        "The operators' API: brands, API keys, portal users, creators, campaigns, placements and their metrics, " +
        'attribution domains, links, codes and connections. Every route needs an admin JWT (HS256, user_typ "svc"). ' +
        'Refused input answers 422 invalid_request with details.',
    },
    servers: [{ url: `${publicBaseUrl}/api/internal` }],
    security: [{ adminJwt: [] }],
    securitySchemes: { adminJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    sections: [{ prefix: '', routes }],
    // No rate limit applies to operators; every route needs Postgres.
    sharedResponses: () => ({ 503: unavailable() }),
  });
}
