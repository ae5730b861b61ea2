import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { Connections } from '../attribution/webhooks/connections';
import { PROVIDERS } from '../attribution/ledger/types';
import type { Services } from '../services';

const listQuery = z.object({
  brand_id: z.string().optional(),
  provider: z.enum(PROVIDERS).optional(),
  status: z.enum(['awaiting_first_event', 'connected', 'error']).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  /** The id of the last connection of the previous page. */
  cursor: z.string().optional(),
});
const idParams = z.object({ id: z.string() });

/**
 * GET /attribution-connections: every brand's billing connections with their health
 * (status, last_event_at, last_error), filterable by brand, provider and status, paged.
 * DELETE /attribution-connections/:id removes one. Brands create connections in their
 * portal; there is deliberately no internal endpoint that creates one (SPEC 4.5).
 */
export async function attributionConnectionRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const { db, config } = services;
  const connections = new Connections(db, config.secretKey, config.publicBaseUrl);

  app.get('/attribution-connections', async (req) => {
    const q = listQuery.parse(req.query);
    const page = await connections.list({ brandId: q.brand_id, provider: q.provider, status: q.status, after: q.cursor, limit: q.limit });
    const last = page.data.at(-1);
    return { data: page.data, pagination: { next_cursor: page.hasMore && last ? last.id : null, has_more: page.hasMore } };
  });

  app.delete('/attribution-connections/:id', async (req, reply) => {
    await connections.delete(idParams.parse(req.params).id);
    return reply.status(204).send();
  });
}
