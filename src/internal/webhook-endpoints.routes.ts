import { z } from 'zod';
import { endpointItem } from '../attribution/outbound-webhooks/endpoints';
import type { WebhookServices } from '../attribution/outbound-webhooks/service';
import { idParams, route } from '../http/route';
import { answers, errors } from './schemas';

/**
 * Operators' view of outbound webhook endpoints: list (every brand's, or one's) and the switch.
 * An endpoint the operator disables says `operator`, and its brand cannot enable it again.
 */
export function webhookEndpointRoutes({ webhooks }: { webhooks: WebhookServices }) {
  const { endpoints } = webhooks;
  return [
    route({
      method: 'GET',
      path: '/webhook-endpoints',
      summary: "Webhook endpoints with their health: one brand's (brand_id) or every brand's",
      query: z.object({ brand_id: z.string().optional() }),
      responses: { 200: answers.item('{data: [endpoint item plus brand_id]}'), ...errors.read },
      async handler({ query }) {
        const rows = await endpoints.listAll(query.brand_id);
        return { data: rows.map((r) => ({ ...endpointItem(r), brand_id: r.brand_id })) };
      },
    }),
    route({
      method: 'PATCH',
      path: '/webhook-endpoints/:id',
      summary: 'Enable or disable an endpoint (disabled_reason operator)',
      params: idParams,
      body: z.object({ enabled: z.boolean() }),
      responses: { 200: answers.item('The endpoint item plus brand_id'), ...errors.write, ...errors.one },
      async handler({ params, body }) {
        const row = await endpoints.setEnabledByOperator(params.id, body.enabled);
        return { ...endpointItem(row), brand_id: row.brand_id };
      },
    }),
  ];
}
