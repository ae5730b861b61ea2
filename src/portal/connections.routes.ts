import { z } from 'zod';
import { PROVIDERS } from '../attribution/ledger/types';
import { type ConnectionAnswer, Connections, createConnectionBody, updateConnectionBody } from '../attribution/webhooks/connections';
import { SETTING_TYPES, setupCards } from '../attribution/webhooks/setup-cards';
import { idParams, route } from '../http/route';
import type { PortalDeps } from './deps';
import { answer, errorSchema, readErrors } from './schemas';

const connectionStatus = z.enum(['awaiting_first_event', 'connected', 'error']);

/** A connection as answered: never a secret, only whether one is stored. */
const portalConnection = z.object({
  id: z.string(),
  brand_id: z.string(),
  provider: z.enum(PROVIDERS),
  status: connectionStatus,
  last_error: z.string().nullable().describe('Why the last delivery was refused, e.g. signature_mismatch'),
  settings: z.record(z.string(), z.unknown()).describe("The provider's settings (docs/webhooks.md, Connections)"),
  webhook_url: z.string().describe('Paste into the provider dashboard; ends in the svw_ token'),
  last_event_at: z.iso.datetime().nullable(),
  signing_secret_set: z.boolean(),
  sandbox_secret_set: z.boolean().optional().describe('Adapty only'),
  signing_secret_warning: z
    .string()
    .nullable()
    .describe('While no secret authenticates deliveries: what that allows (RevenueCat, Adapty: anyone with the URL can post counted events; Stripe, Shopify: every delivery is refused); else null'),
  created_at: z.iso.datetime(),
});

/** A setting of the provider, as the connect form asks for it. */
const settingField = z.object({
  key: z.string().describe('The key in `settings`, e.g. bundle_id'),
  type: z
    .enum(SETTING_TYPES)
    .describe('text; boolean; number (a whole number); choice (one of options); secret (stored encrypted, never answered); map (a JSON object of text to text)'),
  required: z.boolean(),
  options: z.array(z.string()).optional().describe('choice only: the values it takes'),
  default: z.union([z.string(), z.number(), z.boolean()]).optional().describe('What is used when the setting is left out'),
});

/** What to do in the provider's dashboard, with this brand's connection once there is one. */
const setupCard = z.object({
  provider: z.enum(PROVIDERS),
  title: z.string(),
  dashboard: z.string(),
  steps: z.array(z.string()),
  signing_secret: z.object({
    used: z.boolean().describe('false: the provider signs with its own certificates (Apple) and takes no secret'),
    required: z.boolean(),
    what: z.string().describe('What the secret is, in words'),
    without: z.string().nullable().describe('What a connection without one allows, in words; null when the provider takes none'),
  }),
  settings: z.array(settingField).describe("The provider's settings, in the order a form asks for them"),
  connected: z.boolean(),
  connection_id: z.string().nullable(),
  status: connectionStatus.nullable(),
  webhook_url: z.string().nullable(),
});
const connectionsAnswer = z.object({ data: z.array(portalConnection), setup_cards: z.array(setupCard) });

const writeErrors = { 401: readErrors[401], 422: errorSchema('invalid_request (with details)') };
const notFound = { 404: errorSchema("not_found: unknown, or another brand's") };

/**
 * /api/client/attribution/connections (docs/webhooks.md#connections): the brand's billing
 * connections and a setup card per provider. Every query is scoped to the session's brand,
 * so another brand's connection id answers 404. Secrets are accepted, never answered.
 */
export function connectionRoutes({ db, secretKey, publicBaseUrl }: Pick<PortalDeps, 'db' | 'secretKey' | 'publicBaseUrl'>) {
  const connections = new Connections(db, secretKey, publicBaseUrl);
  return [
    route({
      method: 'GET',
      auth: 'session',
      path: '/connections',
      summary: "The brand's billing connections plus a setup card per provider",
      responses: { 200: connectionsAnswer, 401: readErrors[401] },
      async handler(_input, session) {
        // A brand has at most one connection per provider: five rows at most.
        const { data } = await connections.list({ brandId: session.brandId, limit: 100 });
        return answer(connectionsAnswer, { data: data.map(toJson), setup_cards: setupCards(data) });
      },
    }),
    route({
      method: 'POST',
      auth: 'session',
      path: '/connections',
      summary: 'Connect a billing provider: mints the webhook URL to paste into its dashboard',
      body: createConnectionBody,
      responses: { 201: portalConnection, ...writeErrors, 409: errorSchema('already_connected: one connection per provider') },
      async handler({ body }, session) {
        const created = await connections.create(session.brandId, body);
        return answer(portalConnection, toJson(created));
      },
    }),
    route({
      method: 'PATCH',
      auth: 'session',
      path: '/connections/:id',
      summary: 'Replace or clear (null) the signing secret; merge settings (a key set to null is removed)',
      params: idParams,
      body: updateConnectionBody,
      optionalBody: true,
      responses: { 200: portalConnection, ...writeErrors, ...notFound },
      async handler({ params, body }, session) {
        return answer(portalConnection, toJson(await connections.update(params.id, session.brandId, body)));
      },
    }),
    route({
      method: 'DELETE',
      auth: 'session',
      path: '/connections/:id',
      summary: 'Remove a connection: its webhook URL stops working',
      params: idParams,
      responses: { 204: null, 401: readErrors[401], ...notFound },
      async handler({ params }, session) {
        await connections.delete(params.id, session.brandId);
      },
    }),
  ];
}

/** Timestamps as the ISO text JSON carries them. */
function toJson(connection: ConnectionAnswer) {
  return { ...connection, last_event_at: connection.last_event_at?.toISOString() ?? null, created_at: connection.created_at.toISOString() };
}
