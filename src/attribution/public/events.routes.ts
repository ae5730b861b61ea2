import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { EVENT_TYPES, MAX_TRANSACTION_ID, toCurrency } from '../ledger/types';
import { bodyObject, occurredAt, optionalId, optionalText, parseFields, PUBLIC_BODY_LIMIT } from './body';
import type { PublicDeps } from './index';

/** Money in major units; numeric text is accepted from web pixels. */
const money = z
  .union([z.number(), z.string().trim().regex(/^-?\d+(\.\d+)?$/).transform(Number)])
  .pipe(z.number().finite().min(-1e13).max(1e13))
  .nullish();

const eventBody = z.object({
  // Absent or blank is a purchase, like every other blank field is absent.
  event_type: z
    .string()
    .transform((v) => v.trim().toLowerCase() || null)
    .pipe(z.enum(EVENT_TYPES).nullable())
    .nullish()
    .transform((v) => v ?? 'purchase'),
  // `sdk` from the mobile apps; any other value is the web pixel (SPEC 4.2).
  source: z
    .unknown()
    .optional()
    .transform((v) => (v === 'sdk' ? 'sdk' : 'pixel')),
  click_token: optionalText(256),
  code: optionalText(64),
  // Cut to 128 characters like install IDs: a pixel cannot act on a refusal, and losing the purchase is worse.
  transaction_id: optionalId(MAX_TRANSACTION_ID),
  external_user_id: optionalId(256),
  amount: money,
  amount_cents: money,
  currency: z
    .unknown()
    .optional()
    .transform((v) => toCurrency(typeof v === 'string' ? v : null)),
  occurred_at: occurredAt,
});

/**
 * POST /events (SPEC 4.2, 3.2), from the web pixel and the SDKs: resolve the pixel key →
 * validate → record in the ledger (attribute, dedupe on (brand, event_type,
 * transaction_id), queue) → `{ok, duplicate}`.
 */
export async function eventRoutes(app: FastifyInstance, deps: PublicDeps) {
  const { pixelKeys, ledger } = deps;

  app.post('/events', { bodyLimit: PUBLIC_BODY_LIMIT }, async (req) => {
    const body = bodyObject(req.body);
    const brand = await pixelKeys.brandOf(body.pixel_key); // 403 invalid_pixel_key
    const input = parseFields(eventBody, body); // 422 invalid_event_type, invalid_amount, ...
    const { duplicate } = await ledger.record(brand.id, {
      eventType: input.event_type,
      transactionId: input.transaction_id,
      externalUserId: input.external_user_id,
      amount: input.amount ?? (input.amount_cents ?? 0) / 100,
      currency: input.currency,
      source: input.source,
      clickToken: input.click_token,
      code: input.code,
      sandbox: false, // the SDK endpoint has no sandbox flag: pixel and SDK events are live
      occurredAt: input.occurred_at,
    });
    return { ok: true, duplicate };
  });
}
