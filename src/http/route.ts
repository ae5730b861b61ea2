import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { invalidParameter, notFound } from '../refusal';
import { notDecimalDigits } from '../integer-param';
import { parseQuery } from './query';

/**
 * One description of an endpoint for every API (Data API, portal, internal, public): what it
 * takes, what it answers and its handler. mountRoutes serves it; ./openapi.ts documents it.
 */

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** See Route.writesRecords. */
    writesRecords?: boolean;
  }
}

/** An answer as documented: a zod schema, null for no body, or an OpenAPI response object as is. */
export type Answer = z.ZodType | null | { description: string; [k: string]: unknown };

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export type RouteInput<P, Q, B> = { params: P; query: Q; body: B; req: FastifyRequest; reply: FastifyReply };

export type Route<C = void> = {
  method: Method;
  /** Relative to the plugin's prefix, Fastify's `:param` syntax. */
  path: string;
  summary: string;
  operationId?: string;
  /** A path value the schema refuses names no resource: 404 not_found. */
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** An absent body is read as `{}`. */
  optionalBody?: boolean;
  bodyLimit?: number;
  /** By status; the lowest 2xx is the status a handler's answer goes out with (it may set another). */
  responses: Record<number, Answer>;
  /** Needs no credentials (documented with `security: []`). */
  public?: boolean;
  /**
   * Writes the records cached answers name (the tables of migrations/0011): once it succeeds this
   * process drops them at once, before Postgres's notice comes back (src/app.ts).
   */
  writesRecords?: boolean;
  // biome-ignore lint/suspicious/noExplicitAny: each route's own types are checked where route() builds it.
  handler(input: RouteInput<any, any, any>, context: C): Promise<unknown>;
};

/** A route whose handler sees its parsed params, query and body with their types. */
export function route<C = void, P extends z.ZodObject | undefined = undefined, Q extends z.ZodObject | undefined = undefined, B extends z.ZodType | undefined = undefined>(
  r: Omit<Route<C>, 'params' | 'query' | 'body' | 'handler'> & {
    params?: P;
    query?: Q;
    body?: B;
    handler(input: RouteInput<Out<P>, Out<Q>, Out<B>>, context: C): Promise<unknown>;
  },
): Route<C> {
  return r as Route<C>;
}

export type MountOptions<C> = {
  /** Runs before any input is read (authentication, what every handler shares): the handlers' context. */
  context?(req: FastifyRequest, reply: FastifyReply, route: Route<C>): Promise<C> | C;
  /** How a refused query string is answered: 400 invalid_parameter (CONTRACT 5, 8) or 422 invalid_request (CONTRACT 4). */
  queryErrors: 'invalid_parameter' | 'invalid_request';
  /** 'handler': the handler reads the body itself, with its own error codes (the public API, SPEC 7). */
  bodies?: 'parsed' | 'handler';
};

/**
 * Serves routes on `app`: context, then params, query and body in that order (the first
 * problem answers), then the handler, whose answer goes out with the route's 2xx status.
 */
export function mountRoutes<C>(app: FastifyInstance, routes: Route<C>[], opts: MountOptions<C>) {
  for (const r of routes) {
    const ok = Math.min(...Object.keys(r.responses).map(Number).filter((s) => s >= 200 && s < 300));
    app.route({
      method: r.method,
      url: r.path,
      ...(r.bodyLimit ? { bodyLimit: r.bodyLimit } : {}),
      config: { writesRecords: r.writesRecords === true },
      handler: async (req, reply) => {
        const out = await run(r, opts, req, reply, ok);
        if (reply.sent) return reply;
        return out === undefined ? reply.send() : out;
      },
    });
  }
}

async function run<C>(r: Route<C>, opts: MountOptions<C>, req: FastifyRequest, reply: FastifyReply, ok: number) {
  const context = (await opts.context?.(req, reply, r)) as C;
  const params = r.params ? parseParams(r.params, req.params) : undefined;
  const query = r.query ? readQuery(r.query, req.query, opts.queryErrors) : undefined;
  const parseBody = r.body && opts.bodies !== 'handler';
  const body = parseBody ? r.body!.parse(r.optionalBody ? (req.body ?? {}) : req.body) : undefined;
  reply.status(ok);
  return r.handler({ params, query, body, req, reply }, context);
}

// CONTRACT 10: paging out of range is 400 invalid_parameter on every API, whatever its other query errors;
// so is an integer parameter that is not decimal digits.
const PAGING = new Set(['page', 'cursor']);

function readQuery(schema: z.ZodObject, query: unknown, errors: MountOptions<unknown>['queryErrors']) {
  if (errors === 'invalid_parameter') return parseQuery(schema, query);
  const parsed = schema.safeParse(query ?? {});
  if (parsed.success) return parsed.data;
  const paging = parsed.error.issues.find((i) => PAGING.has(String(i.path[0])) || notDecimalDigits(i));
  throw paging ? invalidParameter(String(paging.path[0]), paging.message) : parsed.error;
}

function parseParams(schema: z.ZodObject, params: unknown) {
  const parsed = schema.safeParse(params);
  if (!parsed.success) throw notFound();
  return parsed.data;
}

/** A path id: any text (ids are matched as given; an unknown one is 404). */
export const idParams = z.object({ id: z.string() });
