import { z } from 'zod';
import { PROVIDERS } from '../attribution/ledger/types';
import { Connections } from '../attribution/webhooks/connections';
import { idParams, route } from '../http/route';
import { integerParam } from '../integer-param';
import type { InternalDeps } from './deps';
import { answers, errors } from './schemas';

const listQuery = z.object({
  brand_id: z.string().optional(),
  provider: z.enum(PROVIDERS).optional(),
  status: z.enum(['awaiting_first_event', 'connected', 'error']).optional(),
  limit: integerParam(z.coerce.number().int().min(1).max(100).default(50)),
  // Connection ids are UUIDs: anything else is a cursor this list never gave (400, docs/hardening.md#paging-out-of-range).
  cursor: z.uuid().optional().describe('The id of the last connection of the previous page'),
});

/**
 * GET /attribution-connections lists every brand's billing connections with their health,
 * filtered and paged; DELETE removes one. Brands create connections in their portal: no internal
 * endpoint creates one.
 */
export function attributionConnectionRoutes({ db, secretKey, publicBaseUrl }: Pick<InternalDeps, 'db' | 'secretKey' | 'publicBaseUrl'>) {
  const connections = new Connections(db, secretKey, publicBaseUrl);
  return [
    route({
      method: 'GET',
      path: '/attribution-connections',
      summary: "Every brand's billing connections with their health, filterable, paged",
      query: listQuery,
      responses: { 200: answers.page('connections'), ...errors.read },
      async handler({ query: q }) {
        const page = await connections.list({ brandId: q.brand_id, provider: q.provider, status: q.status, after: q.cursor, limit: q.limit });
        const last = page.data.at(-1);
        return { data: page.data, pagination: { next_cursor: page.hasMore && last ? last.id : null, has_more: page.hasMore } };
      },
    }),
    route({
      method: 'DELETE',
      path: '/attribution-connections/:id',
      summary: 'Remove a connection: its webhook URL stops working',
      params: idParams,
      responses: { 204: null, ...errors.one },
      async handler({ params }) {
        await connections.delete(params.id);
      },
    }),
  ];
}
