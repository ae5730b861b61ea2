import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app';
import { lazyRequestLogger } from '../../src/http/request-log';
import { createLogger } from '../../src/logger';
import { createApiKey, createBrand } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

// The service's own app, on the test service's stores, with a logger at the default level whose lines we read.
let t: TestService;
let app: FastifyInstance;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  t = await startTestService({ workers: false });
  const log = createLogger('info', { write: (line: string) => lines.push(JSON.parse(line)) });
  app = await buildApp({ ...t.services, log });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  if (t) await destroyTestService(t);
});

/** Every line written while one request is served. */
async function linesOf(req: InjectOptions) {
  lines.length = 0;
  const res = await app.inject(req);
  return { res, own: [...lines] };
}

describe('request log', () => {
  it('writes one line per request, when it is answered, with method, url, status, time and request id', async () => {
    const { res, own } = await linesOf({ method: 'GET', url: '/healthz' });
    expect(own).toHaveLength(1);
    const [line] = own;
    expect(line).toMatchObject({ level: 30, msg: 'request completed', method: 'GET', url: '/healthz', statusCode: res.statusCode });
    expect(typeof line!.reqId).toBe('string');
    expect(line!.responseTime).toBeGreaterThanOrEqual(0);
    // No client address in the line (the project never logged one).
    expect(JSON.stringify(line)).not.toContain('127.0.0.1');
  });

  it('carries no secret: Authorization header, api_key query, webhook token path', async () => {
    const a = await linesOf({
      method: 'GET',
      url: '/api/v1/brand?api_key=sk_live_query_secret&x=1',
      headers: { authorization: 'Bearer sk_live_header_secret', 'x-svc-api-key': 'sk_live_other_secret' },
    });
    expect(a.res.statusCode).toBe(401);
    const b = await linesOf({ method: 'POST', url: '/api/webhooks/attribution/stripe/svw_tokensecret', payload: {} });
    expect(a.own).toHaveLength(1);
    expect(b.own).toHaveLength(1);
    expect(a.own[0]).toMatchObject({ url: '/api/v1/brand?api_key=[redacted]&x=1', statusCode: 401 });
    expect(b.own[0]).toMatchObject({
      method: 'POST',
      url: '/api/webhooks/attribution/stripe/svw_[redacted]',
      statusCode: b.res.statusCode,
    });
    const out = JSON.stringify([...a.own, ...b.own]);
    for (const secret of ['sk_live_query_secret', 'sk_live_header_secret', 'sk_live_other_secret', 'tokensecret']) expect(out).not.toContain(secret);
  });

  it('carries no secret sent percent-encoded, which the router decodes and accepts', async () => {
    const brand = await createBrand(t, { name: 'Encoded' });
    const { key } = await createApiKey(t, brand.id);
    const a = await linesOf({ method: 'GET', url: `/api/v1/brand?api%5Fkey=${key}` });
    expect(a.res.statusCode).toBe(200); // the key was read: the line must not show it
    const b = await linesOf({ method: 'POST', url: '/api/webhooks/attribution/stripe/%73vw_tokensecret', payload: {} });
    expect(a.own[0]).toMatchObject({ url: '/api/v1/brand?api%5Fkey=[redacted]', statusCode: 200 });
    expect(b.own[0]).toMatchObject({ url: '/api/webhooks/attribution/stripe/svw_[redacted]' });
    const out = JSON.stringify([...a.own, ...b.own]);
    for (const secret of [key, 'tokensecret']) expect(out).not.toContain(secret);
  });

  it('writes nothing per request above the default level', async () => {
    const quiet: string[] = [];
    const warnApp = await buildApp({ ...t.services, log: createLogger('warn', { write: (line: string) => quiet.push(line) }) });
    try {
      const res = await warnApp.inject({ method: 'GET', url: '/healthz' });
      expect(res.statusCode).toBe(200);
      expect(quiet).toEqual([]);
    } finally {
      await warnApp.close();
    }
  });

  it("makes a request's own logger only when something logs through it, with the request id", () => {
    const written: Record<string, unknown>[] = [];
    const parent = createLogger('info', { write: (line: string) => written.push(JSON.parse(line)) });
    let children = 0;
    const child = parent.child.bind(parent);
    parent.child = ((...args: Parameters<typeof child>) => {
      children++;
      return child(...args);
    }) as typeof parent.child;

    const log = lazyRequestLogger(parent, { reqId: 'req-9' }, {});
    expect(children).toBe(0);
    expect(log.level).toBe('info');
    log.debug('below the level');
    log.warn({ provider: 'stripe' }, 'billing webhook refused');
    log.error('second line');
    expect(children).toBe(1);
    // pino's children inherit from their parent: its own child() again, for the child's child.
    delete (parent as { child?: unknown }).child;
    log.child({ part: 'csv' }).error('from a child');
    expect(written).toMatchObject([
      { level: 40, reqId: 'req-9', provider: 'stripe', msg: 'billing webhook refused' },
      { level: 50, reqId: 'req-9', msg: 'second line' },
      { level: 50, reqId: 'req-9', part: 'csv', msg: 'from a child' },
    ]);
  });
});
