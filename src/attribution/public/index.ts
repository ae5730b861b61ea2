import type { FastifyInstance } from 'fastify';
import { attributionErrorHandler } from '../../http/errors';
import { jsonBodyParser } from '../../http/json-body';
import { documentRoute } from '../../http/openapi';
import { mountRoutes } from '../../http/route';
import { clickRoutes } from './clicks.routes';
import type { PublicDeps } from './deps';
import { eventRoutes } from './events.routes';
import { installRoutes } from './installs.routes';
import { publicAttributionDocument } from './openapi';
import { openRoutes } from './opens.routes';
import { pixelKeyGate } from './pixel-keys';

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

  // Each route names its limits (every POST per client IP; installs and events per pixel key too)
  // and its caller (the pixel key's brand); a refused field answers its own code (bodies 'fields').
  const attributionRoutes = [...clickRoutes(deps), ...installRoutes(deps), ...eventRoutes(deps), ...openRoutes(deps)];
  // The OpenAPI document describes the routes as mounted: a route added to the list is documented.
  const document = documentRoute(() => publicAttributionDocument(deps.publicBaseUrl, [...attributionRoutes, document]));
  mountRoutes(app, [...attributionRoutes, document], {
    gates: { pixel_key: pixelKeyGate(deps.pixelKeys, deps.rateLimiter) },
    rateLimiter: deps.rateLimiter,
    queryErrors: 'invalid_request',
    bodies: 'fields',
  });
}
