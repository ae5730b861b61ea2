import type { FastifyInstance } from 'fastify';
import { metricsText, registry } from '../metrics';
import type { Services } from '../services';

/** GET /healthz and GET /metrics (CONTRACT 7). */
export async function healthRoutes(app: FastifyInstance, { services }: { services: Services }) {
  app.get('/healthz', async (_req, reply) => {
    const checks = await Promise.allSettled([
      services.db.selectNoFrom((eb) => eb.val(1).as('one')).execute(),
      services.redis.ping(),
      services.warehouse.ping().then((ok) => {
        if (!ok) throw new Error('clickhouse ping failed');
      }),
    ]);
    const [postgres, redis, clickhouse] = checks.map((c) => c.status === 'fulfilled');
    if (postgres && redis && clickhouse) return { ok: true };
    return reply.status(503).send({ ok: false, postgres, redis, clickhouse });
  });

  app.get('/metrics', async (_req, reply) => {
    await services.queues.counts().catch(() => undefined); // refresh queue depth gauges
    reply.header('content-type', registry.contentType);
    return metricsText();
  });
}
