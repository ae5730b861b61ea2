import { z } from 'zod';
import { HttpError } from '../../http/errors';

/**
 * Reading public attribution bodies. Refusals answer `{"error":"<code>"}` (SPEC 7):
 * a body that is not a JSON object is `invalid_request`; a field of the wrong type or
 * form is `invalid_<field>` (e.g. `invalid_platform`, `invalid_event_type`), unless the
 * route names its own code for that field (`install_id_required`).
 */
/** CONTRACT 4: the public attribution endpoints refuse bodies over 64 KiB (413 payload_too_large). */
export const PUBLIC_BODY_LIMIT = 64 * 1024;

export const refuse = (status: number, code: string) => new HttpError(status, { error: code });

export function bodyObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw refuse(422, 'invalid_request');
  return body as Record<string, unknown>;
}

export function parseFields<S extends z.ZodType>(schema: S, body: Record<string, unknown>, codes: Record<string, string> = {}): z.output<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const field = String(parsed.error.issues[0]?.path[0] ?? 'request');
  throw refuse(422, codes[field] ?? `invalid_${field}`);
}

/** An optional text field: trimmed and cut to `max` characters; absent or blank is null. */
export const optionalText = (max: number) =>
  z
    .string()
    .nullish()
    .transform((v) => v?.trim().slice(0, max) || null);

/** As optionalText, and numbers are taken as their decimal text (order numbers sent as numbers by web pixels). */
export const optionalId = (max: number) =>
  z
    .union([z.string(), z.number().finite()])
    .nullish()
    .transform((v) => (v === null || v === undefined ? null : String(v).trim().slice(0, max) || null));

/** Instants a client may report: from 1970 to 2099 (Postgres refuses year 0, and ClickHouse partitions by month). */
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(2100, 0, 1);

/** An ISO 8601 instant (`2026-01-01T10:15:00Z`, any offset) from 1970 to 2099; absent is now. */
export const occurredAt = z
  .string()
  .nullish()
  .transform((v, ctx) => {
    if (v === null || v === undefined) return new Date();
    const at = new Date(v);
    const ms = at.getTime();
    if (/^\d{4}-\d{2}-\d{2}/.test(v) && ms >= EARLIEST && ms < LATEST) return at;
    ctx.addIssue({ code: 'custom', message: 'not an ISO 8601 instant from 1970 to 2099' });
    return z.NEVER;
  });
