import { z } from 'zod';
import { type Answer, type Route, route } from './route';

/**
 * The one OpenAPI 3.1 builder: every API's document is generated from the route descriptors
 * (./route.ts) and the zod schemas that parse their input and shape their answers, so a
 * document cannot drift from what its routes do.
 */

export type JsonSchema = { properties?: Record<string, object>; required?: string[]; [k: string]: unknown };

/** A zod schema as a plain JSON Schema object, without the document-level keywords. */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _s, $id: _i, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/** An error answer as documented: `{"error": code, ...}`, `codes` naming which codes and when. */
export const errorSchema = (codes: string) => z.object({ error: z.string().describe(codes) }).loose();

export const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Named component schemas; those referenced inside others become $refs. */
export function componentSchemas(named: [string, z.ZodType][]): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of named) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { io: 'output', uri: (id) => schemaRef(id).$ref }) as {
    schemas: Record<string, JsonSchema>;
  };
  return Object.fromEntries(Object.entries(schemas).map(([id, { $schema: _s, $id: _i, ...schema }]) => [id, schema]));
}

function parameters(schema: z.ZodObject | undefined, where: 'path' | 'query', hidden: string[]) {
  if (!schema) return [];
  const { properties = {}, required = [] } = jsonSchema(schema, 'input');
  return Object.entries(properties)
    .filter(([name]) => !hidden.includes(name))
    .map(([name, s]) => {
      const { description, ...rest } = s as { description?: string };
      return { name, in: where, required: where === 'path' || required.includes(name), description, schema: rest };
    });
}

function response(status: string, answer: Answer) {
  if (answer === null) return { description: 'No content' };
  if (!(answer instanceof z.ZodType)) return answer;
  return { description: answer.description ?? `HTTP ${status}`, content: { 'application/json': { schema: jsonSchema(answer, 'output') } } };
}

// biome-ignore lint/suspicious/noExplicitAny: documents describe routes of any context.
function operation(r: Route<any>, hidden: string[]) {
  return {
    ...(r.operationId ? { operationId: r.operationId } : {}),
    summary: r.summary,
    ...(r.public ? { security: [] } : {}),
    parameters: [...parameters(r.params, 'path', hidden), ...parameters(r.query, 'query', hidden)],
    ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(r.body, 'input') } } } } : {}),
    responses: Object.fromEntries(Object.entries(r.responses).map(([status, answer]) => [status, response(status, answer)])),
  };
}

export type DocumentSpec = {
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  security: Record<string, string[]>[];
  securitySchemes: Record<string, object>;
  /** Routes by the prefix their paths are published under. */
  // biome-ignore lint/suspicious/noExplicitAny: documents describe routes of any context.
  sections: { prefix: string; routes: Route<any>[] }[];
  /** Query parameters declared as security schemes instead (e.g. api_key). */
  hiddenParameters?: string[];
  schemas?: Record<string, JsonSchema>;
};

export function openApiDocument(spec: DocumentSpec) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { prefix, routes } of spec.sections) {
    for (const r of routes) {
      const url = prefix + r.path.replace(/:(\w+)/g, '{$1}');
      paths[url] = { ...paths[url], [r.method.toLowerCase()]: operation(r, spec.hiddenParameters ?? []) };
    }
  }
  return {
    openapi: '3.1.0',
    info: spec.info,
    servers: spec.servers,
    security: spec.security,
    paths,
    components: { securitySchemes: spec.securitySchemes, ...(spec.schemas ? { schemas: spec.schemas } : {}) },
  };
}

/** GET /openapi.json of an API, answering the document `build` makes (once, on first request). */
export function documentRoute(build: () => unknown, { isPublic = true } = {}): Route {
  let document: unknown;
  return route({
    method: 'GET',
    path: '/openapi.json',
    operationId: 'openapi',
    summary: 'This document',
    public: isPublic,
    responses: { 200: { description: 'OpenAPI 3.1 document', content: { 'application/json': {} } } },
    handler: async () => {
      document ??= build();
      return document;
    },
  });
}
