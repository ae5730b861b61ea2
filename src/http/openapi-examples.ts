/**
 * Realistic examples for every schema of an OpenAPI document. Without them Swagger UI (/docs/api)
 * and client generators make values up from the bounds and patterns: counts of
 * -9007199254740991 (zod's safe-integer bounds) and dates such as 9282-07-16 (drawn from the
 * calendar pattern). Values go by field name, then by format; each must pass its own schema's
 * pattern and bounds (test/http/openapi-documents.test.ts checks them all with a validator).
 */

type Schema = Record<string, unknown>;

const DATE = '2026-03-02';
const INSTANT = '2026-03-02T14:05:00Z';
const UUID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';

/** By field (or parameter) name: the first value of the schema's type that fits its pattern wins. */
const BY_NAME: Record<string, unknown[]> = {
  // identifiers
  id: [UUID, '1042'],
  brand_id: [UUID],
  campaign_id: [UUID],
  creator_id: [UUID],
  domain_id: [UUID],
  connection_id: [UUID],
  placement_id: ['tt_7349102385512'],
  install_id: ['3F2B9C1E-6A7D-4E21-9B55-0C7D8E9FA012'],
  transaction_id: ['apple:2000000871234567', 'order-10482'],
  external_user_id: ['3F2B9C1E-6A7D-4E21-9B55-0C7D8E9FA012'],
  click_token: ['svc_Q2xpY2sgdG9rZW4gZXhhbXBsZQ'],
  clipboard_token: ['svc_Q2xpY2sgdG9rZW4gZXhhbXBsZQ'],
  pixel_key: ['pk_live_4f9d2c7a1b3e8f60'],
  key: ['sk_live_8b2e6f1d4c9a7e3b5f0d2c6a'],
  cursor: ['eyJ2IjoxMjA0MCwiaWQiOiJ0dF83MzQ5In0'],
  next_cursor: ['eyJ2IjoxMjA0MCwiaWQiOiJ0dF83MzQ5In0'],
  // names and text
  name: ['Spring launch', 'Maya Lopez', 'Acme'],
  brand_name: ['Acme'],
  first_name: ['Maya'],
  title: ['Connect Stripe'],
  caption: ['Three ways I use the Acme bottle on a hike #ad'],
  label: ['MAYA10'],
  code: ['MAYA10'],
  handle: ['@mayalopez'],
  email: ['maya@acme.example'],
  password: ['correct horse battery staple'],
  message: ['start_date must be on or before end_date'],
  param: ['start_date'],
  error: ['invalid_parameter'],
  what: ['Signs the webhooks Stripe sends'],
  last_error: ['signature did not verify'],
  description: ['Orders for the warehouse system'],
  secret: ['whsec_3f9a0c1e7b2d4f6a8c0e2b4d6f8a0c1e'],
  signing_secret: ['whsec_3f9a0c1e7b2d4f6a8c0e2b4d6f8a0c1e'],
  secret_hint: ['whsec_…0c1e'],
  signing_secret_warning: ['Without a signing secret, anyone who learns this URL can post events to it'],
  without: ['Events are accepted unsigned: anyone with the URL can post them'],
  response_excerpt: ['{"received":true}'],
  steps: ['In the Stripe dashboard, open Developers, then Webhooks, and add this endpoint'],
  options: ['production'],
  default: ['production'],
  status: ['active'],
  event_type: ['purchase'],
  source: ['pixel'],
  resolution_method: ['click'],
  currency: ['USD'],
  platform: ['tiktok'],
  period: ['30d'],
  type: ['web'],
  value: ['svc-verify=3b6f0c1e9a'],
  app_version: ['1.4.0'],
  country: ['US'],
  query: ['utm_source=tiktok&utm_campaign=spring'],
  referrer: ['https://www.tiktok.com/@mayalopez'],
  user_agent: ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148'],
  ip: ['203.0.113.7'],
  // hosts, links, apps
  domain: ['go.acme.example'],
  hostname: ['go.acme.example'],
  slug: ['maya'],
  team_id: ['A1B2C3D4E5'],
  bundle_id: ['com.acme.shop'],
  package: ['com.acme.shop'],
  android_package: ['com.acme.shop'],
  sha256_cert_fingerprints: [Array.from({ length: 32 }, (_, i) => ((i * 37 + 11) % 256).toString(16).toUpperCase().padStart(2, '0')).join(':')],
  deep_link: ['acme://product/42'],
  url: ['https://go.acme.example/maya?utm_source=tiktok'],
  snippet: ['<script async src="https://svc.example/pixel.js" data-pixel-key="pk_live_4f9d2c7a1b3e8f60"></script>'],
  sdk_snippet: ["configure({ pixelKey: 'pk_live_4f9d2c7a1b3e8f60', endpoint: 'https://svc.example' })"],
  react_native: ["configure({ pixelKey: 'pk_live_4f9d2c7a1b3e8f60', endpoint: 'https://svc.example' })"],
  swift: ['Svc.configure(pixelKey: "pk_live_4f9d2c7a1b3e8f60", endpoint: URL(string: "https://svc.example")!)'],
  dashboard: ['https://dashboard.stripe.com/webhooks'],
  // counts and amounts
  views: [48210],
  likes: [3120],
  comments: [214],
  shares: [96],
  posts: [12],
  creators: [8],
  followers: [125000],
  clicks: [1840],
  bot_clicks: [31],
  installs: [212],
  conversions: [57],
  accepted: [2],
  total: [134],
  page: [1],
  page_size: [50],
  limit: [50],
  total_pages: [3],
  avg_views: [4017.5],
  engagement_rate: [0.0714],
  amount: [49.99, '49.99'],
  amount_cents: [4999, '4999'],
  confidence: [0.95],
  // money by currency
  revenue: [{ USD: 1249.5, EUR: 89.9 }],
  refunds: [{ USD: 49.99 }],
};

const BY_FORMAT: Record<string, unknown> = {
  date: DATE,
  'date-time': INSTANT,
  uri: 'https://acme.example/spring-sale',
  url: 'https://acme.example/spring-sale',
  email: 'maya@acme.example',
  uuid: UUID,
};

const URL_EXAMPLES: Record<string, string> = {
  logo_url: 'https://acme.example/logo.png',
  thumbnail_url: 'https://cdn.acme.example/thumbs/7349102385512.jpg',
  destination_url: 'https://acme.example/shop?ref=maya',
  ios_url: 'https://apps.apple.com/app/id1234567890',
  android_url: 'https://play.google.com/store/apps/details?id=com.acme.shop',
  fallback_url: 'https://acme.example/app?svc_cid=svc_Q2xpY2sgdG9rZW4gZXhhbXBsZQ',
  redirect_url: 'https://acme.example/shop?ref=maya&svc_cid=svc_Q2xpY2sgdG9rZW4gZXhhbXBsZQ',
  webhook_url: 'https://svc.example/api/webhooks/attribution/stripe/svw_3kq9x2m7p4',
  sdk_docs_url: 'https://svc.example/docs/sdk',
  pixel_url: 'https://svc.example/pixel.js',
  install_endpoint: 'https://svc.example/api/public/attribution/installs',
  events_endpoint: 'https://svc.example/api/public/attribution/events',
};

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

function typeOf(s: Schema): string | undefined {
  const t = s.type;
  if (Array.isArray(t)) return t.find((x) => x !== 'null');
  return typeof t === 'string' ? t : undefined;
}

/** Whether `value` is of JSON Schema type `type` and within the schema's pattern and bounds. */
function fits(s: Schema, type: string | undefined, value: unknown): boolean {
  if (type === 'integer' && !Number.isInteger(value)) return false;
  if (type === 'number' && typeof value !== 'number') return false;
  if (type === 'string' && typeof value !== 'string') return false;
  if (type === 'object' && (typeof value !== 'object' || value === null || Array.isArray(value))) return false;
  if (type === 'boolean' && typeof value !== 'boolean') return false;
  if (typeof value === 'string') {
    if (typeof s.pattern === 'string' && !new RegExp(s.pattern, 'u').test(value)) return false;
    if (typeof s.maxLength === 'number' && value.length > s.maxLength) return false;
    if (typeof s.minLength === 'number' && value.length < s.minLength) return false;
  }
  if (typeof value === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) return false;
    if (typeof s.maximum === 'number' && value > s.maximum) return false;
    if (typeof s.exclusiveMaximum === 'number' && value >= s.exclusiveMaximum) return false;
  }
  return true;
}

function exampleFor(s: Schema, name: string | undefined): unknown {
  const type = typeOf(s);
  if (type === undefined || type === 'null') return undefined;
  const candidates: unknown[] = [];
  if (name) {
    candidates.push(...(BY_NAME[name] ?? []));
    if (URL_EXAMPLES[name]) candidates.push(URL_EXAMPLES[name]);
    if (/_url$/.test(name) || name === 'endpoint') candidates.push('https://acme.example/spring-sale');
    if (/(^|_)date$/.test(name) || name === 'metrics_since') candidates.push(DATE);
    if (/_at$/.test(name)) candidates.push(INSTANT);
    if (/_id$/.test(name)) candidates.push(UUID);
  }
  if (typeof s.format === 'string' && s.format in BY_FORMAT) candidates.push(BY_FORMAT[s.format]);
  if (type === 'integer') candidates.push(12);
  if (type === 'number') candidates.push(24.5);
  if (type === 'boolean') candidates.push(true);
  // A field no list names yet still reads as words, not "string".
  if (type === 'string' && name) candidates.push(name.charAt(0).toUpperCase() + name.slice(1).replaceAll('_', ' '));
  return candidates.find((v) => fits(s, type, v));
}

/** Adds `examples` to `s` and every schema inside it that has none; drops zod's safe-integer bounds. */
function decorate(s: unknown, name: string | undefined): void {
  if (!s || typeof s !== 'object' || Array.isArray(s)) return;
  const schema = s as Schema;
  if (schema.minimum === -MAX_SAFE) delete schema.minimum;
  if (schema.maximum === MAX_SAFE) delete schema.maximum;
  for (const [field, sub] of Object.entries((schema.properties as Record<string, unknown>) ?? {})) decorate(sub, field);
  decorate(schema.items, name);
  if (typeof schema.additionalProperties === 'object') decorate(schema.additionalProperties, undefined);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) for (const sub of (schema[key] as unknown[]) ?? []) decorate(sub, name);
  if ('example' in schema || 'examples' in schema || 'enum' in schema || 'const' in schema || schema.$ref) return;
  // Swagger UI reads a union's example from the union itself: its first branch's that has one.
  const branches = ((schema.anyOf ?? schema.oneOf) as Schema[] | undefined) ?? [];
  if (branches.length) {
    const first = branches.find((b) => Array.isArray(b.examples));
    if (first) schema.examples = [(first.examples as unknown[])[0]];
    return;
  }
  // A field of any type (read loosely, then checked by the handler): its name's usual value.
  if (Object.keys(schema).every((k) => k === 'description') && name && BY_NAME[name]) {
    schema.examples = [BY_NAME[name]![0]];
    return;
  }
  const leaf = !schema.properties && !schema.items && !schema.allOf;
  const named = name !== undefined && BY_NAME[name] !== undefined && typeOf(schema) === 'object';
  if (!(leaf || named)) return;
  const value = exampleFor(schema, name);
  if (value !== undefined) schema.examples = [value];
}

type Operation = {
  parameters?: { name: string; schema?: unknown }[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { content?: Record<string, { schema?: unknown }>; headers?: Record<string, { schema?: unknown }> }>;
};

/** Decorates every schema of `document`: its operations' parameters, bodies and answers, and its components. */
export function withExamples(document: { paths: Record<string, Record<string, unknown>>; components: { schemas?: Record<string, unknown> } }): void {
  for (const item of Object.values(document.paths)) {
    for (const op of Object.values(item) as Operation[]) {
      for (const p of op.parameters ?? []) decorate(p.schema, p.name);
      for (const media of Object.values(op.requestBody?.content ?? {})) decorate(media.schema, undefined);
      for (const answer of Object.values(op.responses ?? {})) {
        for (const media of Object.values(answer.content ?? {})) decorate(media.schema, undefined);
      }
    }
  }
  for (const schema of Object.values(document.components.schemas ?? {})) decorate(schema, undefined);
}
