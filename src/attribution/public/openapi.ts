import { z } from 'zod';
import { openApiDocument, rateLimited, unavailable } from '../../http/openapi';
import type { Answer, Route } from '../../http/route';
import { EVENT_TYPES } from '../ledger/types';

/**
 * GET /api/public/attribution/openapi.json (public): the document of the endpoints pixels and SDKs
 * call, built by the one builder from the routes as mounted (their zod bodies and declared
 * refusals). Handlers read the pixel key and build their answers themselves, so those two are
 * described here, by route; a route added to the mounted list is documented without more.
 */

const pixelKey = z.string().describe("The brand's public pixel key (`pk_…`), shown on the portal's Setup page");

const linkRef = z.object({ id: z.number().int().min(1), domain: z.string(), slug: z.string().describe("'' for the domain's root link") });
const creatorRef = z.object({ id: z.string(), name: z.string() });

const clickAnswer = z.object({
  redirect_url: z.string().describe('Where to send the visitor now, carrying svc_cid=<click token>'),
  click_token: z.string().nullable().describe('Null for a visit that was not recorded (a bot, or over a limit)'),
  platform_hint: z.enum(['ios', 'android', 'desktop']).nullable(),
  link_type: z.enum(['web', 'app']),
  brand_name: z.string(),
  app: z
    .object({ ios_url: z.string().nullable(), android_url: z.string().nullable(), android_package: z.string().nullable(), fallback_url: z.string() })
    .nullable()
    .describe('App links: what the smart install page offers; null for web links'),
});

const install = z.object({
  install_id: z.string(),
  platform: z.enum(['ios', 'android']),
  attributed: z.boolean(),
  resolution_method: z.enum(['click', 'clipboard', 'ip', 'code', 'unattributed']),
  confidence: z.number().min(0).max(1),
  link: linkRef.nullable(),
  code: z.string().nullable().describe('The creator code that credited the install'),
  creator: creatorRef.nullable(),
  deep_link: z.string().nullable().describe("The credited link's deep link when the install was recorded"),
});
const installAnswer = (duplicate: boolean) => z.object({ ok: z.literal(true), duplicate: z.literal(duplicate), install });

const eventAnswer = z.object({ ok: z.literal(true), duplicate: z.boolean().describe('true: this (event_type, transaction_id) was already recorded; nothing changed') });

const openAnswer = z.object({
  click_token: z.string(),
  deep_link: z.string().nullable().describe("The link's deep link: where the app should go"),
  link: linkRef,
});

/** The answers each handler builds, by `METHOD path` and status. */
const ANSWERS: Record<string, Record<number, z.ZodType>> = {
  'POST /clicks': { 200: clickAnswer },
  'POST /installs': { 200: installAnswer(true), 201: installAnswer(false) },
  'POST /events': { 200: eventAnswer },
  'POST /opens': { 200: openAnswer },
};

/** Field notes the bodies' schemas do not carry, by field name. */
const FIELD_NOTES: Record<string, string> = {
  domain: 'The link host the visitor opened (matched lower-cased, without port, www. or trailing dot)',
  slug: "The link's path without slashes; an unknown slug is served by the domain's root link",
  query: 'The query string of the visit, for its utm_* parameters',
  ip: "The visitor's IP; used only from a TRUST_PROXY address, else the caller's own address counts",
  install_id: 'A stable ID of this install on the device, 128 characters at most',
  clipboard_token: 'A click token the app read from the clipboard (the smart install page copies it)',
  code: 'A creator code the user typed',
  occurred_at: 'ISO 8601 instant from 1970 to 2099; absent is now; without an offset, UTC',
  event_type: `One of ${EVENT_TYPES.join(', ')}; absent is purchase`,
  source: '`sdk` from the mobile SDKs; anything else counts as the web pixel',
  transaction_id: 'Deduplicates with event_type: at most 128 characters (longer is refused, never cut); a whole number is read as its digits',
  amount: 'In major units (9.99); negative only on a refund; at most 1,000,000,000 either way',
  amount_cents: 'In minor units, when amount is absent',
  currency: 'ISO 4217 code; USD when absent or unknown',
  url: 'The creator link the app was opened with (a universal link or app link)',
};

const PUBLIC_ERRORS = "`payload_too_large` (413), `invalid_request` and `invalid_<field>` (422)";

function documented(r: Route<unknown>): Route<unknown> {
  const answers = ANSWERS[`${r.method} ${r.path}`] ?? {};
  const responses: Record<number, Answer> = { ...r.responses };
  for (const [status, schema] of Object.entries(answers)) {
    const declared = r.responses[Number(status)];
    const description = declared && !(declared instanceof z.ZodType) ? declared.description : undefined;
    responses[Number(status)] = description ? schema.describe(description) : schema;
  }
  // The shared 429 (with its headers) replaces each route's own short note of it.
  delete responses[429];
  const takesPixelKey = r.responses[403] !== undefined;
  const body = r.body instanceof z.ZodObject ? (takesPixelKey ? r.body.extend({ pixel_key: pixelKey }) : r.body) : r.body;
  const noted =
    body instanceof z.ZodObject
      ? z.object(Object.fromEntries(Object.entries(body.shape).map(([name, field]) => [name, FIELD_NOTES[name] && !(field as z.ZodType).description ? (field as z.ZodType).describe(FIELD_NOTES[name]!) : field])) as z.ZodRawShape)
      : body;
  return { ...r, body: noted, responses };
}

// biome-ignore lint/suspicious/noExplicitAny: the document describes routes of any context.
export function publicAttributionDocument(publicBaseUrl: string, routes: Route<any>[]) {
  return openApiDocument({
    info: {
      title: 'svc attribution API',
      version: '1.0.0',
      description:
        'What web pixels, mobile SDKs and redirect applications call: clicks, installs, events and app opens. ' +
        "No credential beyond the brand's public pixel key, sent in the body; any origin may call (CORS *), and " +
        `text/plain bodies (navigator.sendBeacon) are read as JSON. Bodies up to 64 KiB. Refusals are {"error": code}: ${PUBLIC_ERRORS}; ` +
        'limits per client IP and per pixel key answer 429 with Retry-After.',
    },
    servers: [{ url: `${publicBaseUrl}/api/public/attribution` }],
    security: [],
    securitySchemes: {},
    sections: [{ prefix: '', routes: routes.map(documented) }],
    sharedResponses: (r) => {
      const shared: Record<number, Answer> = { 503: unavailable() };
      if (r.method === 'POST') shared[429] = rateLimited('RATE_LIMIT_PUBLIC_IP a minute per client IP, RATE_LIMIT_PIXEL_KEY per pixel key');
      return shared;
    },
  });
}
