import type { FastifyInstance } from 'fastify';
import { attributionErrorHandler } from '../../http/errors';
import { jsonBodyParser } from '../../http/json-body';
import { enforceRateLimits } from '../../http/rate-limit';
import { mountRoutes } from '../../http/route';
import { clickRoutes } from './clicks.routes';
import type { PublicDeps } from './deps';
import { eventRoutes } from './events.routes';
import { installRoutes } from './installs.routes';

/**
 * /api/public/attribution: clicks, installs and events, with no credential beyond the public pixel
 * key, so any origin may call them (`Access-Control-Allow-Origin: *`); JSON sent as text/plain
 * (`navigator.sendBeacon`'s form, no preflight) is read as JSON.
 */
export async function publicAttributionRoutes(app: FastifyInstance, deps: PublicDeps) {
  app.setErrorHandler(attributionErrorHandler);
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, jsonBodyParser(app));
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
  const perIp = routes('/clicks', '/installs', '/events');
  const perPixelKey = routes('/installs', '/events');
  app.addHook('onRequest', async (req, reply) => {
    if (req.method === 'POST' && perIp.has(req.routeOptions.url ?? '')) await enforceRateLimits(reply, deps.rateLimiter, [['public_ip', req.ip]]);
  });
  app.addHook('preHandler', async (req, reply) => {
    if (req.method !== 'POST' || !perPixelKey.has(req.routeOptions.url ?? '')) return;
    const pixelKey = (req.body as { pixel_key?: unknown } | null)?.pixel_key;
    if (typeof pixelKey === 'string' && pixelKey.trim()) await enforceRateLimits(reply, deps.rateLimiter, [['pixel_key', pixelKey.trim()]]);
  });

  // Each handler reads its body itself: SPEC 7 names a code per refused field.
  mountRoutes(app, [...clickRoutes(deps), ...installRoutes(deps), ...eventRoutes(deps)], { queryErrors: 'invalid_request', bodies: 'handler' });
}
