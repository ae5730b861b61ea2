import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorHandler } from '../../src/http/errors';
import { mountRoutes, route } from '../../src/http/route';
import { conflict, forbidden, invalidRequest, notFound, refuse } from '../../src/refusal';

/** The route descriptor's runner: the order inputs are read in, how each refusal is answered. */
async function app(queryErrors: 'invalid_parameter' | 'invalid_request') {
  const a = Fastify();
  a.setErrorHandler(errorHandler);
  const calls: string[] = [];
  mountRoutes(
    a,
    [
      route({
        method: 'PATCH',
        path: '/things/:id',
        summary: 'Change a thing',
        params: z.object({ id: z.string().regex(/^\d+$/).transform(Number) }),
        query: z.object({ limit: z.coerce.number().int().max(10).default(5), cursor: z.string().regex(/^\d+$/, 'invalid cursor').optional() }),
        body: z.object({ name: z.string().min(1) }),
        responses: { 200: null },
        async handler({ params, query, body }) {
          calls.push('handler');
          if (body.name === 'taken') throw conflict('name_taken');
          if (body.name === 'shared') throw forbidden();
          if (body.name === 'bad') throw invalidRequest([{ path: 'name', message: 'not allowed' }]);
          if (params.id === 404) throw notFound();
          return { id: params.id, limit: query.limit, name: body.name };
        },
      }),
      route({
        method: 'DELETE',
        path: '/things/:id',
        summary: 'Remove a thing',
        responses: { 204: null },
        async handler({ reply }) {
          reply.status(204);
        },
      }),
    ],
    {
      queryErrors,
      auth: 'admin',
      gates: {
        admin: {
          at: 'handler',
          resolve: async () => {
            calls.push('context');
            return {};
          },
        },
      },
    },
  );
  return { a, calls };
}

const patch = (a: Awaited<ReturnType<typeof app>>['a'], url: string, payload: unknown) => a.inject({ method: 'PATCH', url, payload: payload as object });

describe('mountRoutes', () => {
  it('answers the handler with its parsed, typed inputs after the context', async () => {
    const { a, calls } = await app('invalid_parameter');
    const res = await patch(a, '/things/7?limit=3', { name: 'x' });
    expect(res.json()).toEqual({ id: 7, limit: 3, name: 'x' });
    expect(calls).toEqual(['context', 'handler']);
  });

  it('answers a path value its schema refuses 404 not_found, before the query and body are read', async () => {
    const { a, calls } = await app('invalid_parameter');
    const res = await patch(a, '/things/abc?limit=99', {});
    expect([res.statusCode, res.json()]).toEqual([404, { error: 'not_found' }]);
    expect(calls).toEqual(['context']);
  });

  it('answers a refused query 400 invalid_parameter or 422 invalid_request, as the API says', async () => {
    const data = await app('invalid_parameter');
    const res = await patch(data.a, '/things/7?limit=99', { name: 'x' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_parameter', param: 'limit' });
    const internal = await app('invalid_request');
    const res2 = await patch(internal.a, '/things/7?limit=99', { name: 'x' });
    expect(res2.statusCode).toBe(422);
    expect(res2.json()).toMatchObject({ error: 'invalid_request', details: [{ path: 'limit' }] });
    expect(internal.calls).toEqual(['context']);
  });

  it('answers a cursor that does not decode 400 invalid_parameter on every API', async () => {
    for (const queryErrors of ['invalid_parameter', 'invalid_request'] as const) {
      const { a, calls } = await app(queryErrors);
      const res = await patch(a, '/things/7?cursor=garbage', { name: 'x' });
      expect([res.statusCode, res.json()]).toEqual([400, { error: 'invalid_parameter', param: 'cursor', message: 'invalid cursor' }]);
      expect(calls).toEqual(['context']);
    }
  });

  it('answers a refused body 422 invalid_request naming the field', async () => {
    const { a } = await app('invalid_parameter');
    const res = await patch(a, '/things/7', { name: '' });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ error: 'invalid_request', details: [{ path: 'name' }] });
  });

  it('answers each domain refusal with its status and code', async () => {
    const { a } = await app('invalid_parameter');
    const answers = await Promise.all(['taken', 'shared', 'bad'].map((name) => patch(a, '/things/7', { name })));
    expect(answers.map((r) => [r.statusCode, r.json()])).toEqual([
      [409, { error: 'name_taken' }],
      [403, { error: 'forbidden' }],
      [422, { error: 'invalid_request', details: [{ path: 'name', message: 'not allowed' }] }],
    ]);
    const missing = await patch(a, '/things/404', { name: 'x' });
    expect([missing.statusCode, missing.json()]).toEqual([404, { error: 'not_found' }]);
  });

  it('answers a 204 with no body', async () => {
    const { a } = await app('invalid_parameter');
    const res = await a.inject({ method: 'DELETE', url: '/things/7' });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
  });
});

describe('mountRoutes: who may call a route', () => {
  type Seen = string[];
  // A route taking a body, behind a gate that refuses without `x-key`, resolving the caller from it.
  function gated(at: 'request' | 'handler', seen: Seen) {
    const a = Fastify();
    a.setErrorHandler(errorHandler);
    mountRoutes(
      a,
      [
        route({
          method: 'POST',
          path: '/things',
          summary: 'Make a thing',
          auth: 'admin',
          body: z.object({ name: z.string() }),
          responses: { 200: null },
          async handler({ body }, caller) {
            seen.push(`handler ${caller.sub}`);
            return { name: body.name, by: caller.sub };
          },
        }),
        route({ method: 'GET', path: '/open', summary: 'Anyone', public: true, responses: { 200: null }, handler: async () => ({ ok: true }) }),
      ],
      {
        queryErrors: 'invalid_request',
        gates: {
          admin: {
            at,
            async resolve(req) {
              seen.push('gate');
              const key = req.headers['x-key'];
              if (typeof key !== 'string') throw refuse(401, 'unauthorized');
              return { sub: key };
            },
          },
        },
      },
    );
    return a;
  }
  const post = (a: ReturnType<typeof gated>, payload: string, key?: string) =>
    a.inject({ method: 'POST', url: '/things', payload, headers: { 'content-type': 'application/json', ...(key ? { 'x-key': key } : {}) } });

  it('hands the handler the caller its gate resolved', async () => {
    const seen: Seen = [];
    const res = await post(gated('handler', seen), '{"name":"x"}', 'op');
    expect([res.statusCode, res.json()]).toEqual([200, { name: 'x', by: 'op' }]);
    expect(seen).toEqual(['gate', 'handler op']);
  });

  it('a request gate refuses before the body is read; a handler gate after it', async () => {
    const early = await post(gated('request', []), '{not json');
    expect([early.statusCode, early.json()]).toEqual([401, { error: 'unauthorized' }]);
    const late = await post(gated('handler', []), '{not json');
    expect([late.statusCode, late.json().error]).toEqual([422, 'invalid_request']);
  });

  it('a public route takes no gate', async () => {
    const seen: Seen = [];
    const res = await gated('handler', seen).inject({ url: '/open' });
    expect([res.statusCode, seen]).toEqual([200, []]);
  });

  it('refuses to mount a route whose caller or limit nothing resolves', () => {
    const r = route({ method: 'GET', path: '/x', summary: 'x', auth: 'admin', responses: { 200: null }, handler: async () => null });
    expect(() => mountRoutes(Fastify(), [r], { queryErrors: 'invalid_request' })).toThrow(/no gate resolves/);
    const limited = route({ method: 'GET', path: '/y', summary: 'y', public: true, limits: ['portal'], responses: { 200: null }, handler: async () => null });
    expect(() => mountRoutes(Fastify(), [limited], { queryErrors: 'invalid_request' })).toThrow(/nothing counts its limits portal/);
  });
});
