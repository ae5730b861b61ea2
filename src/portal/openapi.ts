import { openApiDocument } from '../http/openapi';
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
  });
}
