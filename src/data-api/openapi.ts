import { componentSchemas, openApiDocument, rateLimited, unavailable } from '../http/openapi';
import type { Route } from '../http/route';
import { components } from './routes';

/**
 * GET /openapi.json (docs/api.md#versions): the Data API's document, built by the one builder from
 * the route table, so it cannot drift from what the API does.
 */

// biome-ignore lint/suspicious/noExplicitAny: the document describes routes of any context.
export function dataApiDocument(publicBaseUrl: string, routes: Route<any>[]) {
  return openApiDocument({
    info: {
      title: 'svc Data API',
      version: '1.0.0',
      description:
        "Read-only reporting of a brand's creator-marketing results: the brand and its visible campaigns, " +
        'summary and daily totals, placements (posts) and creators, as JSON and CSV. Dates are UTC days. ' +
        'Authenticate with an API key: Authorization: Bearer <key> (preferred), X-SVC-API-Key, or api_key in the query.',
    },
    servers: [{ url: `${publicBaseUrl}/api/v1` }],
    security: [{ bearerKey: [] }, { apiKeyHeader: [] }, { apiKeyQuery: [] }],
    securitySchemes: {
      bearerKey: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key>' },
      apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-SVC-API-Key' },
      apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key', description: 'Discouraged: query strings end up in logs' },
    },
    sections: [{ prefix: '', routes }],
    hiddenParameters: ['api_key'],
    schemas: componentSchemas(components),
    // Every keyed request counts (per key; failed keys per client IP); every one reads Postgres and ClickHouse.
    sharedResponses: () => ({
      429: rateLimited('RATE_LIMIT_DATA_API requests a minute per API key, or RATE_LIMIT_FAILED_KEYS failed keys a minute per client IP'),
      503: unavailable(),
    }),
  });
}
