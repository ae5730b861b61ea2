import { openApiDocument, rateLimited, unavailable } from '../http/openapi';
import type { Answer } from '../http/route';
import type { Route } from '../http/route';

/**
 * GET /api/client/openapi.json (public): the portal's OpenAPI 3.1 document, built by the one
 * builder from the routes as mounted (full paths), with the schemas they parse and answer through.
 */
export function portalDocument(publicBaseUrl: string, sections: { prefix: string; routes: Route[] }[]) {
  return openApiDocument({
    info: {
      title: 'svc client portal API',
      version: '1.0.0',
      description:
        'The brand portal: one brand per session. Log in at /api/client/auth/login; the session cookie ' +
        'authenticates the rest. Writes must come from the service origin. Reads over time take period ' +
        '(default 30d), start_date and end_date with the Data API rules.',
    },
    servers: [{ url: publicBaseUrl }],
    security: [{ portalSession: [] }],
    securitySchemes: { portalSession: { type: 'apiKey', in: 'cookie', name: 'svc_session' } },
    sections,
    // A session's requests count (RATE_LIMIT_PORTAL); login declares its own limits. Every route reads Postgres.
    sharedResponses: (r) => {
      const shared: Record<number, Answer> = { 503: unavailable() };
      if (!r.public) shared[429] = rateLimited('RATE_LIMIT_PORTAL requests a minute per session');
      return shared;
    },
  });
}
