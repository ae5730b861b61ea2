import { z } from 'zod';
import { withExamples } from './openapi-examples';
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

const RETRY_AFTER = { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 1, examples: [12] } };
const RATE_HEADERS = {
  'RateLimit-Limit': { description: 'Requests allowed in the window', schema: { type: 'integer', examples: [600] } },
  'RateLimit-Remaining': { description: 'Requests left in the window', schema: { type: 'integer', examples: [0] } },
  'RateLimit-Reset': { description: 'Seconds until the window resets', schema: { type: 'integer', examples: [12] } },
};

/** 429 `{"error":"rate_limited"}` with `Retry-After` (docs/operations.md: which limit counts what). */
export const rateLimited = (which: string) => ({
  description: `rate_limited: ${which}; wait Retry-After seconds`,
  headers: { 'Retry-After': RETRY_AFTER, ...RATE_HEADERS },
  content: { 'application/json': { schema: { type: 'object', properties: { error: { type: 'string', const: 'rate_limited' } }, required: ['error'] } } },
});

/** 503 `{"error":"unavailable"}`: a store is down or did not answer in time; never held longer than 5 s. */
export const unavailable = (what = 'Postgres, Redis or ClickHouse is down or did not answer in time; try again shortly') => ({
  description: `unavailable: ${what}`,
  content: { 'application/json': { schema: { type: 'object', properties: { error: { type: 'string', const: 'unavailable' } }, required: ['error'] } } },
});

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

/**
 * A route without its own operationId gets one from its method and path (`GET /attribution/links/{id}`
 * is `getAttributionLinksById`), so generated clients name every call; the API's own prefix is left out.
 */
function defaultOperationId(method: string, url: string): string {
  const words = url
    .split(/[/-]/)
    .filter((w) => w && !['api', 'client', 'internal', 'v1', 'public'].includes(w))
    .map((w) => (w.startsWith('{') ? `by_${w.slice(1, -1)}` : w).replace(/\W/g, '_'))
    .flatMap((w) => w.split('_'))
    .filter(Boolean);
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

// biome-ignore lint/suspicious/noExplicitAny: documents describe routes of any context.
function operation(r: Route<any>, hidden: string[], shared: Record<number, Answer>, url: string) {
  const responses = { ...shared, ...r.responses };
  return {
    operationId: r.operationId ?? defaultOperationId(r.method, url),
    summary: r.summary,
    ...(r.public ? { security: [] } : {}),
    parameters: [...parameters(r.params, 'path', hidden), ...parameters(r.query, 'query', hidden)],
    ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(r.body, 'input') } } } } : {}),
    responses: Object.fromEntries(
      Object.entries(responses)
        .sort(([a], [b]) => Number(a) - Number(b))
        .map(([status, answer]) => [status, response(status, answer)]),
    ),
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
  /**
   * Answers a route may give besides its own (429, 503: limits and stores apply to whole APIs);
   * a route's own declaration of a status wins. The document's own route gets none.
   */
  // biome-ignore lint/suspicious/noExplicitAny: documents describe routes of any context.
  sharedResponses?: (r: Route<any>) => Record<number, Answer>;
};

export function openApiDocument(spec: DocumentSpec) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { prefix, routes } of spec.sections) {
    for (const r of routes) {
      const url = prefix + r.path.replace(/:(\w+)/g, '{$1}');
      const shared = r.operationId === DOCUMENT_OPERATION ? {} : (spec.sharedResponses?.(r) ?? {});
      paths[url] = { ...paths[url], [r.method.toLowerCase()]: operation(r, spec.hiddenParameters ?? [], shared, url) };
    }
  }
  // A copy: the examples go into it, never into schemas the routes share.
  const document = structuredClone({
    openapi: '3.1.0',
    info: spec.info,
    servers: spec.servers,
    security: spec.security,
    paths,
    // No schemes (the attribution API: its pixel key is in the body), no "Authorize" button in Swagger UI.
    components: {
      ...(Object.keys(spec.securitySchemes).length ? { securitySchemes: spec.securitySchemes } : {}),
      ...(spec.schemas ? { schemas: spec.schemas } : {}),
    },
  });
  withExamples(document);
  codeSpans(document);
  return document;
}

/** A placeholder such as `<key>` or `invalid_<field>` (outside a code span), as Markdown would take it: for an HTML tag. */
const PLACEHOLDER = /[^\s`(]*<[a-z][\w -]*>[^\s`),;]*/gi;

/** Descriptions are Markdown (Swagger UI drops `<key>` as an unknown tag): placeholders go into code spans. */
function codeSpans(node: unknown): void {
  if (!node || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'description' || key === 'summary') && typeof value === 'string') {
      (node as Record<string, unknown>)[key] = value
        .split('`')
        .map((part, i) => (i % 2 ? part : part.replace(PLACEHOLDER, (m) => `\`${m}\``)))
        .join('`');
    } else codeSpans(value);
  }
}

const DOCUMENT_OPERATION = 'openapi';

/** GET /openapi.json of an API, answering the document `build` makes (once, on first request). */
export function documentRoute(build: () => unknown, { isPublic = true } = {}): Route {
  let document: unknown;
  return route({
    method: 'GET',
    path: '/openapi.json',
    operationId: DOCUMENT_OPERATION,
    summary: 'This document',
    public: isPublic,
    responses: { 200: { description: 'OpenAPI 3.1 document', content: { 'application/json': {} } } },
    handler: async () => {
      document ??= build();
      return document;
    },
  });
}
