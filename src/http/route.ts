import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { invalidParameter, notFound, refuse } from '../refusal';
import { notDecimalDigits } from '../integer-param';
import type { AdminClaims } from './admin-auth';
import { parseQuery } from './query';
import { enforceRateLimit, type RateLimiter, type RateLimitKind } from './rate-limit';

/**
 * One description of an endpoint for every API (Data API, portal, internal, public): what it
 * takes, what it answers and its handler. mountRoutes serves it; ./openapi.ts documents it.
 */

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** An answer as documented: a zod schema, null for no body, or an OpenAPI response object as is. */
export type Answer = z.ZodType | null | { description: string; [k: string]: unknown };

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export type RouteInput<P, Q, B> = { params: P; query: Q; body: B; req: FastifyRequest; reply: FastifyReply };

/**
 * Who may call a route, and the caller its handler is given. Plumbing names its own; an API adds
 * the callers it resolves (`declare module '../http/route' { interface Callers { ... } }`).
 */
export interface Callers {
  /** Anyone. */
  none: undefined;
  /** An operator: the admin JWT as Bearer (or its cookie on the queue board), src/http/admin-auth.ts. */
  admin: AdminClaims;
  /** A scraper of /metrics: `Authorization: Bearer <METRICS_TOKEN>` when that is set (src/http/health.ts). */
  metrics_token: undefined;
}
export type Auth = keyof Callers;

/**
 * How an API resolves one kind of caller: before the body is read (`request`) or after it, before
 * params and query (`handler`). It counts the `limits` it keys (per API key, session, pixel key)
 * among those the route names, in its own order with its refusals.
 */
export type Gate<A extends Auth> = {
  at: 'request' | 'handler';
  limits?: RateLimitKind[];
  resolve(req: FastifyRequest, reply: FastifyReply, limits: RateLimitKind[]): Promise<Callers[A]>;
};
export type Gates = { [A in Auth]?: Gate<A> };

// biome-ignore lint/suspicious/noExplicitAny: a list of routes holds every caller type.
export type Route<C = any> = {
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
  /** Who may call it; unsaid, a public route is `none` and any other its API's (MountOptions.auth). */
  auth?: Auth;
  /** Its rate limits (docs/hardening.md): `public_ip` is counted before the body is read, the rest by its gate. */
  limits?: RateLimitKind[];
  /** bodies 'fields': the code a refused field answers instead of `invalid_<field>` (e.g. install_id_required). */
  fieldCodes?: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: each route's own types are checked where route() builds it.
  handler(input: RouteInput<any, any, any>, caller: C): Promise<unknown>;
};

/** The caller a route's handler is given: the one its `auth` names (none unsaid). */
type CallerOf<A> = [A] extends [never] ? undefined : A extends Auth ? Callers[A] : undefined;

/** A route whose handler sees its parsed params, query and body, and the caller its `auth` names, with their types. */
export function route<A extends Auth = never, P extends z.ZodObject | undefined = undefined, Q extends z.ZodObject | undefined = undefined, B extends z.ZodType | undefined = undefined>(
  r: Omit<Route, 'params' | 'query' | 'body' | 'handler' | 'auth'> & {
    auth?: A;
    params?: P;
    query?: Q;
    body?: B;
    handler(input: RouteInput<Out<P>, Out<Q>, Out<B>>, caller: CallerOf<A>): Promise<unknown>;
  },
): Route<CallerOf<A>> {
  return r as Route<CallerOf<A>>;
}

export type MountOptions = {
  /** Who may call the routes that say nothing (Route.auth). */
  auth?: Auth;
  /** The limits of the routes that take `auth` and name none (Route.limits). */
  limits?: RateLimitKind[];
  /** How this API resolves each kind of caller its routes name. */
  gates?: Gates;
  /** Counts the routes' limits. */
  rateLimiter?: RateLimiter;
  /** How a refused query string is answered: 400 invalid_parameter (Data API, portal) or 422 invalid_request (internal set-up). */
  queryErrors: 'invalid_parameter' | 'invalid_request';
  /**
   * How a refused body is answered: 422 invalid_request with zod's details ('parsed'), or (the
   * attribution API, docs/api.md) 422 invalid_request when it is not a JSON object, else
   * `invalid_<field>` of the first field at fault or the route's fieldCodes ('fields').
   */
  bodies?: 'parsed' | 'fields';
};

// The caller a gate resolved before the body was read, for the handler.
const resolved = new WeakMap<FastifyRequest, unknown>();

/**
 * Serves routes on `app`, every request in one direction (the first refusal answers): limits per
 * client IP and a `request` gate's caller before the body is read; once it is read, a `handler`
 * gate's caller, then params, query and body; then the handler, given its caller, whose answer
 * goes out with the route's 2xx status.
 */
// biome-ignore lint/suspicious/noExplicitAny: routes of every caller type are served alike.
export function mountRoutes(app: FastifyInstance, routes: Route<any>[], opts: MountOptions) {
  for (const r of routes) {
    const ok = Math.min(...Object.keys(r.responses).map(Number).filter((s) => s >= 200 && s < 300));
    const auth = r.auth ?? (r.public ? 'none' : (opts.auth ?? 'none'));
    const limits = r.limits ?? (auth === opts.auth ? opts.limits : undefined) ?? [];
    const gate = auth === 'none' ? undefined : (opts.gates?.[auth] as Gate<Auth> | undefined);
    if (auth !== 'none' && !gate) throw new Error(`${r.method} ${r.path}: no gate resolves its '${auth}' callers`);
    const unkeyed = limits.filter((kind) => kind !== 'public_ip' && !gate?.limits?.includes(kind));
    if (unkeyed.length) throw new Error(`${r.method} ${r.path}: nothing counts its limits ${unkeyed.join(', ')}`);
    if (limits.length && !opts.rateLimiter) throw new Error(`${r.method} ${r.path}: limits without a rate limiter`);
    const byIp = limits.includes('public_ip');
    const early = gate?.at === 'request' ? gate : undefined;
    app.route({
      method: r.method,
      url: r.path,
      ...(r.bodyLimit ? { bodyLimit: r.bodyLimit } : {}),
      ...(byIp || early
        ? {
            onRequest: async (req: FastifyRequest, reply: FastifyReply) => {
              // Before the body is read: a body refused unread still carries the RateLimit headers.
              if (byIp) await enforceRateLimit(reply, opts.rateLimiter!, 'public_ip', req.ip);
              if (early) resolved.set(req, await early.resolve(req, reply, limits));
            },
          }
        : {}),
      handler: async (req, reply) => {
        const caller = gate?.at === 'handler' ? await gate.resolve(req, reply, limits) : resolved.get(req);
        const out = await run(r, opts, req, reply, ok, caller);
        if (reply.sent) return reply;
        return out === undefined ? reply.send() : out;
      },
    });
  }
}

// biome-ignore lint/suspicious/noExplicitAny: see mountRoutes.
async function run(r: Route<any>, opts: MountOptions, req: FastifyRequest, reply: FastifyReply, ok: number, caller: unknown) {
  const params = r.params ? parseParams(r.params, req.params) : undefined;
  const query = r.query ? readQuery(r.query, req.query, opts.queryErrors) : undefined;
  const raw = r.optionalBody ? (req.body ?? {}) : req.body;
  const body = r.body ? (opts.bodies === 'fields' ? parseFields(r.body, raw, r.fieldCodes) : r.body.parse(raw)) : undefined;
  reply.status(ok);
  return r.handler({ params, query, body, req, reply }, caller);
}

/** A body that is not a JSON object: 422 invalid_request (bodies 'fields'). */
export function bodyObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw refuse(422, 'invalid_request');
  return body as Record<string, unknown>;
}

/** bodies 'fields': the first field of the wrong type or form is `invalid_<field>`, unless `codes` names its own. */
export function parseFields<S extends z.ZodType>(schema: S, body: unknown, codes: Record<string, string> = {}): z.output<S> {
  const parsed = schema.safeParse(bodyObject(body));
  if (parsed.success) return parsed.data;
  const field = String(parsed.error.issues[0]?.path[0] ?? 'request');
  throw refuse(422, codes[field] ?? `invalid_${field}`);
}

// Paging out of range is 400 invalid_parameter on every API, whatever its other query errors;
// so is an integer parameter that is not decimal digits.
const PAGING = new Set(['page', 'cursor']);

function readQuery(schema: z.ZodObject, query: unknown, errors: MountOptions['queryErrors']) {
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
