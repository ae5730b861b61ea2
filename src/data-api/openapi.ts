import { z } from 'zod';
import {
  brandSchema,
  creatorSchema,
  cursorPaginationSchema,
  dailyRowSchema,
  errorSchemas,
  metaSchema,
  pagePaginationSchema,
  postSchema,
  summarySchema,
} from './resources';
import { type Endpoint, endpoints } from './routes';

/**
 * GET /openapi.json (SPEC 2.9, 9): generated from the zod schemas that validate the
 * requests and describe the answers, so it cannot drift from what the API does.
 */

type JsonSchema = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** A zod schema as a plain JSON Schema object, without the document-level keywords. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _s, $id: _i, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/** Query parameters of an endpoint; the api_key parameter is declared as a security scheme instead. */
function parameters(endpoint: Endpoint) {
  return Object.entries(endpoint.query.shape)
    .filter(([name]) => name !== 'api_key')
    .map(([name, field]) => {
      const { description, ...schema } = jsonSchema(field as z.ZodType, 'input');
      return { name, in: 'query', required: false, description, schema };
    });
}

const errorResponses = {
  '400': {
    description: 'A parameter is invalid; `param` names it',
    content: { 'application/json': { schema: ref('InvalidParameter') } },
  },
  '401': {
    description: 'The API key is missing, unknown or revoked',
    content: { 'application/json': { schema: ref('Unauthorized') } },
  },
};

function operation(endpoint: Endpoint) {
  const ok =
    endpoint.kind === 'json'
      ? { description: 'OK', content: { 'application/json': { schema: ref(endpoint.response.name) } } }
      : {
          description: 'CSV with a header row (columns as SPEC 2.8); null values are empty cells',
          headers: { 'Content-Disposition': { schema: { type: 'string' }, description: 'attachment; filename=...' } },
          content: { 'text/csv': { schema: { type: 'string' } } },
        };
  return {
    operationId: endpoint.path.replace(/^\//, '').replace(/[/.]/g, '_'),
    summary: endpoint.summary,
    parameters: parameters(endpoint),
    responses: { '200': ok, ...errorResponses },
  };
}

/** Named component schemas; those referenced inside others become $refs. */
function componentSchemas(): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  const named: [string, z.ZodType][] = [
    ['Brand', brandSchema],
    ['Summary', summarySchema],
    ['DailyRow', dailyRowSchema],
    ['Post', postSchema],
    ['Creator', creatorSchema],
    ['Meta', metaSchema],
    ['CursorPagination', cursorPaginationSchema],
    ['PagePagination', pagePaginationSchema],
    ['InvalidParameter', errorSchemas.invalidParameter],
    ['Unauthorized', errorSchemas.unauthorized],
  ];
  for (const e of endpoints) if (e.kind === 'json') named.push([e.response.name, e.response.schema]);
  for (const [id, schema] of named) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { io: 'output', uri: (id) => ref(id).$ref }) as {
    schemas: Record<string, JsonSchema>;
  };
  return Object.fromEntries(
    Object.entries(schemas).map(([id, { $schema: _s, $id: _i, ...schema }]) => [id, schema]),
  );
}

export function openApiDocument(publicBaseUrl: string) {
  return {
    openapi: '3.1.0',
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
    paths: {
      ...Object.fromEntries(endpoints.map((e) => [e.path, { get: operation(e) }])),
      '/openapi.json': {
        get: {
          operationId: 'openapi',
          summary: 'This document',
          security: [],
          responses: { '200': { description: 'OpenAPI 3.1 document', content: { 'application/json': {} } } },
        },
      },
    },
    components: {
      securitySchemes: {
        bearerKey: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key>' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-SVC-API-Key' },
        apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key', description: 'Discouraged: query strings end up in logs' },
      },
      schemas: componentSchemas(),
    },
  };
}
