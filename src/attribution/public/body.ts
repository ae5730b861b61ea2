import { z } from 'zod';
import { errorSchema } from '../../http/openapi';
import { isRecordableInstant } from '../../recordable-time';

/** The public attribution endpoints refuse bodies over 64 KiB (413 payload_too_large). */
export const PUBLIC_BODY_LIMIT = 64 * 1024;

/** The refusals every public route may answer, each as {"error": code}. */
export const publicErrors = {
  413: errorSchema('payload_too_large'),
  422: errorSchema('invalid_request (not a JSON object), or invalid_<field>'),
  429: errorSchema('rate_limited, with Retry-After'),
};


/** An optional text field: trimmed and cut to `max` characters; absent or blank is null. */
export const optionalText = (max: number) =>
  z
    .string()
    .nullish()
    .transform((v) => v?.trim().slice(0, max) || null);

/**
 * As optionalText, and whole numbers are taken as their decimal text (order numbers sent as
 * numbers by web pixels). Only numbers JSON carried exactly: beyond 2^53 two different order
 * numbers could arrive as one, and the second purchase would be answered as a duplicate.
 */
export const optionalId = (max: number) =>
  z
    .union([z.string(), z.number().int()])
    .nullish()
    .transform((v) => (v === null || v === undefined ? null : String(v).trim().slice(0, max) || null));

/** Date, then optionally time (seconds and fraction optional) and offset (`Z`, `±hh`, `±hhmm`, `±hh:mm`). */
const ISO_INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;

/**
 * Epoch ms of an ISO 8601 instant, or NaN. Stricter than `Date`, which rolls 2026-02-30 over
 * to March 2 and reads a time without an offset in the server's zone: here every part must
 * exist on the calendar, and a time without an offset is UTC.
 */
export function parseIsoInstant(text: string): number {
  const m = ISO_INSTANT.exec(text);
  if (!m) return Number.NaN;
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1, 7).map((part) => Number(part ?? 0));
  const ms = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  const offset = m[9] ? (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11] ?? 0)) : 0;
  const daysInMonth = new Date(Date.UTC(year!, month!, 0)).getUTCDate();
  const valid =
    month! >= 1 && month! <= 12 && day! >= 1 && day! <= daysInMonth && hour <= 23 && minute <= 59 && second <= 59 &&
    Math.abs(offset) < 24 * 60 && Number(m[11] ?? 0) <= 59;
  return valid ? Date.UTC(year!, month! - 1, day!, hour, minute, second, ms) - offset * 60_000 : Number.NaN;
}

/** An ISO 8601 instant (`2026-01-01T10:15:00Z`, any offset; none is UTC) from 1970 to 2099; absent is now. */
export const occurredAt = z
  .string()
  .nullish()
  .transform((v, ctx) => {
    if (v === null || v === undefined) return new Date();
    const ms = parseIsoInstant(v.trim());
    if (isRecordableInstant(ms)) return new Date(ms);
    ctx.addIssue({ code: 'custom', message: 'not an ISO 8601 instant from 1970 to 2099' });
    return z.NEVER;
  });
