import { z } from 'zod';
import { PROVIDERS, type Provider } from '../ledger/types';
import type { ConnectionAnswer } from './connections';
import { SETTINGS_SCHEMAS } from './providers';
import { withoutSecret } from './unsigned';

/**
 * The portal's setup card per provider (GET /api/client/attribution/connections): the
 * exact steps a brand follows in that provider's dashboard. docs/webhooks.md
 * ("Dashboard steps per provider") shows the same steps; keep them in step.
 */
export type SetupCard = {
  provider: Provider;
  title: string;
  /** Where the provider's dashboard is, in words. */
  dashboard: string;
  steps: string[];
  /**
   * `used: false`: the provider signs otherwise (Apple's certificates) and takes no secret.
   * `without`: what a connection without one allows, in words (null for Apple).
   */
  signing_secret: { used: boolean; required: boolean; what: string; without: string | null };
  settings: SettingField[];
  /** Whether the brand has a connection for this provider (see `status` for its health). */
  connected: boolean;
  connection_id: string | null;
  status: ConnectionAnswer['status'] | null;
  webhook_url: string | null;
};

export const SETTING_TYPES = ['text', 'boolean', 'number', 'choice', 'secret', 'map'] as const;

/** A connection setting as a form asks for it: `number` is a whole number, `map` a JSON object of text to text. */
export type SettingField = {
  key: string;
  type: (typeof SETTING_TYPES)[number];
  required: boolean;
  /** The values a `choice` takes. */
  options?: string[];
  /** What the service uses when the setting is left out. */
  default?: string | number | boolean;
};

type CardText = Omit<SetupCard, 'provider' | 'connected' | 'connection_id' | 'status' | 'webhook_url' | 'steps' | 'settings' | 'signing_secret'> & {
  steps(url: string, settings: Record<string, unknown>): string[];
  signing_secret: Omit<SetupCard['signing_secret'], 'without'>;
};

const URL_PLACEHOLDER = 'the webhook URL shown here once you connect';
const installAttribute = (settings: Record<string, unknown>) => String(settings.install_id_attribute ?? 'svc_install_id');

const CARDS: Record<Provider, CardText> = {
  revenuecat: {
    title: 'RevenueCat',
    dashboard: 'RevenueCat dashboard → your project → Integrations → Webhooks',
    steps: (url, settings) => [
      'In the RevenueCat dashboard open your project, then Integrations → Webhooks, and click "Add new webhook".',
      `Webhook URL: ${url}`,
      'Authorization header value: enter a long random value and paste the same value here as the signing secret (sent as is or as "Bearer <value>"). Optional, but without it anyone who has the URL can post events that are counted.',
      'Environment to send events for: production and sandbox (sandbox purchases are stored as sandbox rows and never counted). Events for one app only: set app_id here.',
      `In your app, set the subscriber attribute "${installAttribute(settings)}" to the SDK's install ID, e.g. Purchases.shared.attribution.setAttributes(["${installAttribute(settings)}": installId]). Optionally "svc_cid" (a click token) and "svc_code" (a creator code).`,
      'Click "Send test event" or make a sandbox purchase: the connection turns connected.',
    ],
    signing_secret: { used: true, required: false, what: 'the Authorization header value you typed in RevenueCat' },
  },
  adapty: {
    title: 'Adapty',
    dashboard: 'Adapty Dashboard → Integrations → Webhook',
    steps: (url, settings) => [
      'In the Adapty Dashboard open Integrations → Webhook and turn the integration on.',
      `Production endpoint URL and Sandbox endpoint URL: ${url}`,
      'Authorization header value for production endpoint: enter a long random value and paste it here as the signing secret. Authorization header value for sandbox endpoint: paste it here as the sandbox_secret setting. Both optional, but without them anyone who has the URL can post events that are counted.',
      'Turn on "Send user attributes". If you renamed events, list them here in event_name_map as {"your name": "adapty_event_name"}.',
      `In your app, set the custom attribute "${installAttribute(settings)}" to the SDK's install ID (Adapty.updateProfile with customAttributes). Optionally "svc_cid" (a click token) and "svc_code" (a creator code).`,
      'Click Save: Adapty sends a verification request and the connection turns connected. A sandbox purchase is stored as a sandbox row.',
    ],
    signing_secret: { used: true, required: false, what: 'the Authorization header value for the production endpoint' },
  },
  stripe: {
    title: 'Stripe',
    dashboard: 'Stripe Dashboard → Developers → Webhooks (Workbench)',
    steps: (url) => [
      'In the Stripe Dashboard open Developers → Webhooks and click "Add destination" (or "Add endpoint"), account events, a Webhook endpoint.',
      `Endpoint URL: ${url}`,
      'Events to send: checkout.session.completed, checkout.session.async_payment_succeeded, invoice.paid, charge.refunded.',
      'Create it, click "Reveal" under Signing secret, and paste the whsec_… value here as the signing secret (required; update it here after rolling it).',
      'At Checkout, pass the click token as client_reference_id (Payment Links: ?client_reference_id=svc_…) and set metadata.svc_install_id (and svc_cid, svc_code) on the session and in subscription_data.metadata, so renewals carry them.',
      'Complete a test-mode checkout or run "stripe trigger checkout.session.completed": the connection turns connected. Without Checkout, turn on first_invoice_as_purchase.',
    ],
    signing_secret: { used: true, required: true, what: 'the endpoint signing secret, whsec_…' },
  },
  shopify: {
    title: 'Shopify',
    dashboard: 'Shopify admin → Settings → Notifications → Webhooks',
    steps: (url) => [
      'In the Shopify admin open Settings → Notifications, scroll to Webhooks and click "Create webhook".',
      `Event "Order payment", format JSON, URL ${url}, latest API version. Create a second webhook, event "Refund create", same URL.`,
      'Copy the key under "Your webhooks will be signed with" and paste it here as the signing secret (required).',
      'Set shop_domain here to your <shop>.myshopify.com domain.',
      'Our storefront snippet saves the click token as the cart attribute "svc_cid"; an app can save the install ID as "svc_install_id". Creator codes are read from discount codes.',
      'Click "Send test notification" or place a test order: the connection turns connected.',
    ],
    signing_secret: { used: true, required: true, what: 'the key shown under "Your webhooks will be signed with"' },
  },
  apple: {
    title: 'App Store (App Store Server Notifications V2)',
    dashboard: 'App Store Connect → your app → App Information → App Store Server Notifications',
    steps: (url) => [
      'In App Store Connect open your app, then App Information → App Store Server Notifications.',
      `Production Server URL and Sandbox Server URL: ${url}, Version 2 notifications.`,
      'No secret: Apple signs every notification. Set bundle_id here (required) and app_apple_id (the Apple ID shown under App Information).',
      'In your app, pass the install ID as the purchase\'s appAccountToken (StoreKit 2: .appAccountToken(UUID(uuidString: installId)!); StoreKit 1: applicationUsername).',
      'Request a test notification (App Store Server API, POST /inApps/v1/notifications/test) or make a sandbox purchase: the connection turns connected.',
    ],
    signing_secret: { used: false, required: false, what: 'none: Apple signs with its own certificates' },
  },
};

type JsonProperty = { type?: string; enum?: string[]; writeOnly?: boolean; default?: string | number | boolean };

/** A setting's type read from its JSON Schema; a setting no form fits stops the start. */
function settingType(key: string, p: JsonProperty): SettingField['type'] {
  if (p.enum) return 'choice';
  if (p.writeOnly) return 'secret';
  if (p.type === 'string') return 'text';
  if (p.type === 'boolean') return 'boolean';
  if (p.type === 'integer') return 'number';
  if (p.type === 'object') return 'map';
  throw new Error(`setting ${key}: no portal form for ${JSON.stringify(p)}`);
}

/** Each provider's settings as its zod schema takes them (SETTINGS_SCHEMAS), in the schema's order. */
const SETTINGS = Object.fromEntries(
  PROVIDERS.map((provider) => {
    const schema = z.toJSONSchema(SETTINGS_SCHEMAS[provider], { io: 'input' }) as { properties: Record<string, JsonProperty>; required?: string[] };
    const fields = Object.entries(schema.properties).map(([key, p]): SettingField => ({
      key,
      type: settingType(key, p),
      required: schema.required?.includes(key) ?? false,
      ...(p.enum ? { options: p.enum } : {}),
      ...(p.default !== undefined ? { default: p.default } : {}),
    }));
    return [provider, fields];
  }),
) as Record<Provider, SettingField[]>;

/** One card per provider, with the brand's connection (URL, status) when it has one. */
export function setupCards(connections: ConnectionAnswer[]): SetupCard[] {
  return PROVIDERS.map((provider) => {
    const connection = connections.find((c) => c.provider === provider);
    const { steps, signing_secret, ...card } = CARDS[provider];
    return {
      provider,
      ...card,
      signing_secret: { ...signing_secret, without: withoutSecret(provider) },
      steps: steps(connection?.webhook_url ?? URL_PLACEHOLDER, connection?.settings ?? {}),
      settings: SETTINGS[provider],
      connected: connection !== undefined,
      connection_id: connection?.id ?? null,
      status: connection?.status ?? null,
      webhook_url: connection?.webhook_url ?? null,
    };
  });
}
