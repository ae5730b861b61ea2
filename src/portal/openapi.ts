import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { authOperations } from './auth.routes';
import { codeOperations } from './codes.routes';
import { connectionOperations } from './connections.routes';
import { domainOperations } from './domains.routes';
import { eventOperations } from './events.routes';
import { linkOperations } from './links.routes';
import { overviewOperations } from './overview.routes';
import type { Operation, Operations } from './schemas';
import { setupOperations } from './setup.routes';

/**
 * GET /api/client/openapi.json (public): the portal's OpenAPI 3.1 document, generated from
 * the zod schemas the routes parse their input with and send their answers through.
 */
const sections: { prefix: string; operations: Operations }[] = [
  { prefix: '/api/client/auth', operations: authOperations },
  {
    prefix: '/api/client/attribution',
    operations: {
      ...overviewOperations,
      ...linkOperations,
      ...codeOperations,
      ...eventOperations,
      ...setupOperations,
      ...domainOperations,
      ...connectionOperations,
    },
  },
];

type JsonSchema = { properties?: Record<string, object>; required?: string[]; [k: string]: unknown };

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

function parameters(schema: z.ZodObject | undefined, where: 'path' | 'query') {
  if (!schema) return [];
  const { properties = {}, required = [] } = jsonSchema(schema, 'input');
  return Object.entries(properties).map(([name, s]) => {
    const { description, ...rest } = s as { description?: string };
    return { name, in: where, required: where === 'path' || required.includes(name), description, schema: rest };
  });
}

function operation(op: Operation) {
  return {
    summary: op.summary,
    ...(op.public ? { security: [] } : {}),
    parameters: [...parameters(op.params, 'path'), ...parameters(op.query, 'query')],
    ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(op.body, 'input') } } } } : {}),
    responses: Object.fromEntries(
      Object.entries(op.responses).map(([status, schema]) => [
        status,
        schema
          ? { description: schema.description ?? `HTTP ${status}`, content: { 'application/json': { schema: jsonSchema(schema, 'output') } } }
          : { description: 'No content' },
      ]),
    ),
  };
}

export function portalOpenApi(publicBaseUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { prefix, operations } of sections) {
    for (const [key, op] of Object.entries(operations)) {
      const [method, path] = key.split(' ') as [string, string];
      const url = prefix + path.replace(/:(\w+)/g, '{$1}');
      paths[url] = { ...paths[url], [method.toLowerCase()]: operation(op) };
    }
  }
  return {
    openapi: '3.1.0',
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
    paths,
    components: { securitySchemes: { portalSession: { type: 'apiKey', in: 'cookie', name: 'svc_session' } } },
  };
}

export async function openApiRoutes(app: FastifyInstance, { publicBaseUrl }: { publicBaseUrl: string }) {
  const document = portalOpenApi(publicBaseUrl);
  app.get('/openapi.json', async () => document);
}
