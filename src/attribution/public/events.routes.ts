import { z } from 'zod';
import { errorSchema } from '../../http/openapi';
import { route } from '../../http/route';
import { EVENT_TYPES, MAX_LEDGER_AMOUNT, MAX_TRANSACTION_ID, RefundRefused, toCurrency } from '../ledger/types';
import { occurredAt, optionalId, optionalText, PUBLIC_BODY_LIMIT, publicErrors } from './body';
import { refuse } from '../../refusal';
import type { PublicDeps } from './deps';

/** A finite number; numeric text is accepted from web pixels. Bounds are checked once converted (eventAmount). */
const money = z
  .union([z.number(), z.string().trim().regex(/^-?\d+(\.\d+)?$/).transform(Number)])
  .pipe(z.number().finite())
  .nullish();

/**
 * The amount in major units (`amount` first, else `amount_cents` / 100, else 0), or 422
 * invalid_amount: beyond a billion either way, or negative on anything but a refund (a pixel
 * key is public, so a negative purchase would let anyone erase a brand's revenue).
 */
function eventAmount(input: { event_type: string; amount?: number | null; amount_cents?: number | null }): number {
  const amount = input.amount ?? (input.amount_cents ?? 0) / 100;
  if (Math.abs(amount) > MAX_LEDGER_AMOUNT || (amount < 0 && input.event_type !== 'refund')) throw refuse(422, 'invalid_amount');
  return amount;
}

const eventBody = z.object({
  // Absent or blank is a purchase, like every other blank field is absent.
  event_type: z
    .string()
    .transform((v) => v.trim().toLowerCase() || null)
    .pipe(z.enum(EVENT_TYPES).nullable())
    .nullish()
    .transform((v) => v ?? 'purchase'),
  // `sdk` from the mobile apps; any other value is the web pixel (docs/api.md#attribution-api).
  source: z
    .unknown()
    .optional()
    .transform((v) => (v === 'sdk' ? 'sdk' : 'pixel')),
  click_token: optionalText(256),
  code: optionalText(64),
  // Never cut (422 invalid_transaction_id): two orders sharing their first 128 characters would merge.
  transaction_id: optionalId(Number.MAX_SAFE_INTEGER).refine((v) => v === null || v.length <= MAX_TRANSACTION_ID, 'at most 128 characters'),
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
 * POST /events (docs/api.md#attribution-api), from the web pixel and the SDKs: resolve the pixel key →
 * validate → record in the ledger (attribute, dedupe on (brand, event_type,
 * transaction_id), queue) → `{ok, duplicate}`.
 */
export const eventRoutes = ({ ledger }: Pick<PublicDeps, 'ledger'>) => [
  route({
    method: 'POST',
    path: '/events',
    summary: 'Record a purchase, subscription, trial or refund from the web pixel or an SDK',
    public: true,
    auth: 'pixel_key', // 422 invalid_request (not an object), 403 invalid_pixel_key
    limits: ['public_ip', 'pixel_key'],
    body: eventBody,
    fieldCodes: { amount_cents: 'invalid_amount' }, // 422 invalid_event_type, invalid_amount, ...
    bodyLimit: PUBLIC_BODY_LIMIT,
    responses: {
      200: { description: '{ok: true, duplicate}' },
      403: errorSchema('invalid_pixel_key'),
      ...publicErrors,
      422: errorSchema('invalid_request, invalid_<field> (invalid_amount, invalid_transaction_id, ...), or invalid_refund'),
    },
    async handler({ body: input }, brand) {
      const recorded = ledger.record(brand.id, {
        eventType: input.event_type,
        transactionId: input.transaction_id,
        externalUserId: input.external_user_id,
        amount: eventAmount(input), // refunds are stored -abs by the ledger
        currency: input.currency,
        source: input.source,
        clickToken: input.click_token,
        code: input.code,
        sandbox: false, // the SDK endpoint has no sandbox flag: pixel and SDK events are live
        occurredAt: input.occurred_at,
      });
      // A refund only against a public purchase that still counts, at most its amount (docs/api.md, "Refunds").
      const { duplicate } = await recorded.catch((err: unknown) => {
        throw err instanceof RefundRefused ? refuse(422, err.code) : err;
      });
      return { ok: true, duplicate };
    },
  }),
];
