import { z } from 'zod';
import { MAX_URL_LENGTH, UrlRefused } from '../attribution/outbound-webhooks/addresses';
import { deliveryCursor } from '../attribution/outbound-webhooks/deliveries';
import { DEFAULT_GRACE_SECONDS, endpointItem } from '../attribution/outbound-webhooks/endpoints';
import type { WebhookServices } from '../attribution/outbound-webhooks/service';
import { DELIVERY_ERRORS, EVENT_DESCRIPTIONS, EVENT_TYPES } from '../attribution/outbound-webhooks/tables';
import { pageParams } from '../attribution/reporting/paging';
import { refuse } from '../refusal';
import { route } from '../http/route';
import { errorSchema, pagination, readErrors } from './schemas';

const eventType = z.enum(EVENT_TYPES);

const endpoint = z.object({
  id: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  event_types: z.array(eventType),
  attributed_only: z.boolean().describe('true: ledger rows without attribution are skipped unless they supersede a public row'),
  include_sandbox: z.boolean(),
  enabled: z.boolean().describe('false exactly when status is disabled'),
  status: z.enum(['active', 'failing', 'disabled']),
  failing_since: z.iso.datetime().nullable(),
  disabled_at: z.iso.datetime().nullable(),
  disabled_reason: z.enum(['user', 'failing', 'gone', 'operator']).nullable(),
  secret_hint: z.string().describe('The first 10 characters of the signing secret'),
  previous_secret_expires_at: z.iso.datetime().nullable().describe('While a rotated-out secret still signs too'),
  last_attempt_at: z.iso.datetime().nullable(),
  last_success_at: z.iso.datetime().nullable(),
  created_at: z.iso.datetime(),
});
const withSecret = endpoint.extend({ secret: z.string().describe('whsec_…: shown only now; verify signatures with it') });

const delivery = z.object({
  id: z.string(),
  event_id: z.string().describe('The body id and webhook-id header: deduplicate on it'),
  event_type: eventType,
  status: z.enum(['pending', 'succeeded', 'failed']),
  attempt_count: z.number().int(),
  next_attempt_at: z.iso.datetime().nullable(),
  last_attempt_at: z.iso.datetime().nullable(),
  response_status: z.number().int().nullable(),
  error: z.enum(DELIVERY_ERRORS).nullable(),
  test: z.boolean(),
  created_at: z.iso.datetime(),
});
const deliveryDetail = delivery.extend({
  payload: z.unknown().describe('The body sent, as a JSON object'),
  attempts: z.array(
    z.object({
      attempt: z.number().int(),
      at: z.iso.datetime(),
      response_status: z.number().int().nullable(),
      duration_ms: z.number().int(),
      error: z.enum(DELIVERY_ERRORS).nullable(),
      response_excerpt: z.string().nullable().describe('At most 1 KiB of the answer'),
    }),
  ),
});

const url = z.string().max(MAX_URL_LENGTH * 4).describe('https:// URL of the receiver (docs/webhooks.md, "Receiving webhooks")');
const createBody = z.object({
  url,
  description: z.string().max(200).nullable().optional(),
  event_types: z.array(eventType).min(1).optional(),
  attributed_only: z.boolean().optional(),
  include_sandbox: z.boolean().optional(),
});
const updateBody = createBody.partial().extend({ enabled: z.boolean().optional() });
const rotateBody = z.object({ grace_seconds: z.number().int().min(0).max(604_800).optional() });
const testBody = z.object({ type: eventType.optional() });

const params = z.object({ id: z.string() });
const deliveryParams = z.object({ id: z.string(), delivery_id: z.string() });
const deliveriesQuery = z.object({
  status: z.enum(['pending', 'succeeded', 'failed']).optional(),
  event_type: eventType.optional(),
  ...pageParams(deliveryCursor),
});

const notFound = { 404: errorSchema("not_found: unknown, or another brand's") };
const urlErrors = { 422: errorSchema('invalid_request (with details), or invalid_url with reason') };

/** A refused URL as docs/api.md answers it: 422 with the first rule it breaks. */
async function checkingUrl<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof UrlRefused) throw refuse(422, 'invalid_url', { reason: err.reason });
    throw err;
  }
}

const json = <T>(schema: z.ZodType<T>, value: unknown): T => {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new Error(`portal answer does not match its schema: ${parsed.error.message}`);
  return parsed.data;
};

/**
 * /webhooks: the brand's endpoints for outbound webhooks, their secrets (answered only by create and
 * rotate), test events and the delivery log with replay. Scoped to the session's brand: another
 * brand's ids answer 404.
 */
export function webhookRoutes({ webhooks }: { webhooks: WebhookServices }) {
  const { endpoints, deliveries } = webhooks;
  return [
    route({
      method: 'GET',
      auth: 'session',
      path: '/webhooks',
      summary: "The brand's webhook endpoints, and the event types they may take",
      responses: { 200: z.object({ data: z.array(endpoint), event_types: z.array(z.object({ type: eventType, description: z.string() })) }), 401: readErrors[401] },
      async handler(_input, session) {
        const rows = await endpoints.list(session.brandId);
        return {
          data: rows.map((r) => json(endpoint, endpointItem(r))),
          event_types: EVENT_TYPES.map((type) => ({ type, description: EVENT_DESCRIPTIONS[type] })),
        };
      },
    }),
    route({
      method: 'POST',
      auth: 'session',
      path: '/webhooks',
      summary: 'Register an endpoint; answers its signing secret, shown only this once',
      body: createBody,
      responses: {
        201: withSecret,
        401: readErrors[401],
        ...urlErrors,
        409: errorSchema('webhook_url_taken, or endpoint_limit_reached'),
      },
      async handler({ body }, session) {
        const { row, secret } = await checkingUrl(() => endpoints.create(session.brandId, body));
        return json(withSecret, { ...endpointItem(row), secret });
      },
    }),
    route({
      method: 'GET',
      auth: 'session',
      path: '/webhooks/:id',
      summary: 'One endpoint',
      params,
      responses: { 200: endpoint, 401: readErrors[401], ...notFound },
      async handler({ params: p }, session) {
        return json(endpoint, endpointItem(await endpoints.get(session.brandId, p.id)));
      },
    }),
    route({
      method: 'PATCH',
      auth: 'session',
      path: '/webhooks/:id',
      summary: 'Change an endpoint; enabled: true clears its failure state (not when the operator disabled it)',
      params,
      body: updateBody,
      optionalBody: true,
      responses: { 200: endpoint, 401: readErrors[401], ...notFound, ...urlErrors, 409: errorSchema('webhook_url_taken, or endpoint_disabled (by the operator)') },
      async handler({ params: p, body }, session) {
        const row = await checkingUrl(() => endpoints.update(session.brandId, p.id, body));
        return json(endpoint, endpointItem(row));
      },
    }),
    route({
      method: 'DELETE',
      auth: 'session',
      path: '/webhooks/:id',
      summary: 'Remove an endpoint and its delivery log',
      params,
      responses: { 204: null, 401: readErrors[401], ...notFound },
      async handler({ params: p }, session) {
        await endpoints.delete(session.brandId, p.id);
      },
    }),
    route({
      method: 'POST',
      auth: 'session',
      path: '/webhooks/:id/rotate-secret',
      summary: `A new signing secret; the old one keeps signing too for grace_seconds (default ${DEFAULT_GRACE_SECONDS})`,
      params,
      body: rotateBody,
      optionalBody: true,
      responses: { 200: withSecret, 401: readErrors[401], ...notFound, 422: errorSchema('invalid_request') },
      async handler({ params: p, body }, session) {
        const { row, secret } = await endpoints.rotate(session.brandId, p.id, body.grace_seconds);
        return json(withSecret, { ...endpointItem(row), secret });
      },
    }),
    route({
      method: 'POST',
      auth: 'session',
      path: '/webhooks/:id/test',
      summary: 'Send a sample event (test: true) once; it never changes the endpoint health',
      params,
      body: testBody,
      optionalBody: true,
      responses: { 202: delivery, 401: readErrors[401], ...notFound, 422: errorSchema('invalid_request') },
      async handler({ params: p, body }, session) {
        const row = await endpoints.get(session.brandId, p.id);
        return json(delivery, await deliveries.test(row.brand_id, row.id, body.type ?? 'sale.created'));
      },
    }),
    route({
      method: 'GET',
      auth: 'session',
      path: '/webhooks/:id/deliveries',
      summary: "The endpoint's deliveries, newest first",
      params,
      query: deliveriesQuery,
      responses: { 200: z.object({ data: z.array(delivery), pagination }), ...readErrors, ...notFound },
      async handler({ params: p, query }, session) {
        const row = await endpoints.get(session.brandId, p.id);
        const page = await deliveries.list(row.id, query);
        return { data: page.data.map((d) => json(delivery, d)), pagination: page.pagination };
      },
    }),
    route({
      method: 'GET',
      auth: 'session',
      path: '/webhooks/:id/deliveries/:delivery_id',
      summary: 'One delivery with its body and every attempt',
      params: deliveryParams,
      responses: { 200: deliveryDetail, 401: readErrors[401], ...notFound },
      async handler({ params: p }, session) {
        const row = await endpoints.get(session.brandId, p.id);
        return json(deliveryDetail, await deliveries.detail(row.id, p.delivery_id));
      },
    }),
    route({
      method: 'POST',
      auth: 'session',
      path: '/webhooks/:id/deliveries/:delivery_id/replay',
      summary: 'Send a delivery again: the same body and webhook-id, its schedule restarted',
      params: deliveryParams,
      responses: { 202: delivery, 401: readErrors[401], ...notFound, 409: errorSchema('delivery_pending, or endpoint_disabled') },
      async handler({ params: p }, session) {
        const row = await endpoints.get(session.brandId, p.id);
        return json(delivery, await deliveries.replay(row.id, p.delivery_id, row.disabled_at !== null));
      },
    }),
  ];
}
