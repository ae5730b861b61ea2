import type { FastifyInstance, FastifyReply } from 'fastify';
import { attributionErrorHandler } from '../../http/errors';
import { jsonBodyParser } from '../../http/json-body';
import { enforceRateLimit, type RateLimitKind } from '../../http/rate-limit';
import { documentRoute } from '../../http/openapi';
import { mountRoutes } from '../../http/route';
import { clickRoutes } from './clicks.routes';
import type { PublicDeps } from './deps';
import { eventRoutes } from './events.routes';
import { installRoutes } from './installs.routes';
import { publicAttributionDocument } from './openapi';
import { openRoutes } from './opens.routes';

/**
 * /api/public/attribution: clicks, installs and events, with no credential beyond the public pixel
 * key, so any origin may call them (`Access-Control-Allow-Origin: *`); JSON sent as text/plain
 * (`navigator.sendBeacon`'s form, no preflight) is read as JSON.
 */
export async function publicAttributionRoutes(app: FastifyInstance, deps: PublicDeps) {
  app.setErrorHandler(attributionErrorHandler);
  app.addContentTypeParser('text/plain', { parseAs: 'buffer' }, jsonBodyParser(app));
  app.addHook('onSend', (_req, reply, payload, done) => {
    reply.header('access-control-allow-origin', '*');
    done(null, payload);
  });
  app.options('/*', async (_req, reply) =>
    reply
      .header('access-control-allow-methods', 'POST')
      .header('access-control-allow-headers', 'content-type')
      .header('access-control-max-age', '86400')
      .status(204)
      .send(),
  );

  // CONTRACT 10: every POST per client IP, counted before the body is read (so a body refused
  // unread carries the headers too); installs and events also per pixel key, once it is read.
  const routes = (...paths: string[]) => new Set(paths.map((path) => `${app.prefix}${path}`));
  const perIp = routes('/clicks', '/installs', '/events', '/opens');
  const perPixelKey = routes('/installs', '/events');
  const limit = (reply: FastifyReply, kind: RateLimitKind, id: string, done: (err?: Error) => void) =>
    enforceRateLimit(reply, deps.rateLimiter, kind, id).then(() => done(), done);
  app.addHook('onRequest', (req, reply, done) => {
    if (req.method === 'POST' && perIp.has(req.routeOptions.url ?? '')) limit(reply, 'public_ip', req.ip, done);
    else done();
  });
  app.addHook('preHandler', (req, reply, done) => {
    const pixelKey = req.method === 'POST' && perPixelKey.has(req.routeOptions.url ?? '') ? (req.body as { pixel_key?: unknown } | null)?.pixel_key : undefined;
    if (typeof pixelKey === 'string' && pixelKey.trim()) limit(reply, 'pixel_key', pixelKey.trim(), done);
    else done();
  });

  // Each handler reads its body itself: SPEC 7 names a code per refused field.
  const attributionRoutes = [...clickRoutes(deps), ...installRoutes(deps), ...eventRoutes(deps), ...openRoutes(deps)];
  // The OpenAPI document describes the routes as mounted: a route added to the list is documented.
  const document = documentRoute(() => publicAttributionDocument(deps.publicBaseUrl, [...attributionRoutes, document]));
  mountRoutes(app, [...attributionRoutes, document], { queryErrors: 'invalid_request', bodies: 'handler' });
}
