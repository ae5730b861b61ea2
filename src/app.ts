import cookie from '@fastify/cookie';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { bullBoardRoutes } from './http/bull-board';
import { errorHandler } from './http/errors';
import { healthRoutes } from './http/health';
import { internalRoutes } from './internal';
import { httpDuration } from './metrics';
import { portalRoutes } from './portal';
import type { Services } from './services';

/**
 * Builds the HTTP app on already-open services, without listening: tests inject
 * requests into it, `main.ts` listens. Each capability is one plugin.
 */
export async function buildApp(services: Services): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: services.log as FastifyBaseLogger,
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
  });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((_req, reply) => reply.status(404).send({ error: 'not_found' }));
  app.addHook('onResponse', async (req, reply) => {
    httpDuration.observe(
      { method: req.method, route: req.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  await app.register(cookie);
  const opts = { services };
  await app.register(healthRoutes, opts);
  await app.register(bullBoardRoutes, opts);
  await app.register(internalRoutes, { ...opts, prefix: '/api/internal' });
  await app.register(portalRoutes, { ...opts, prefix: '/api/client' });
  return app;
}
