import { z } from 'zod';
import { errorSchema } from '../http/openapi';

/**
 * Pieces of the portal's answers (docs/api.md#endpoints-apiclientattribution) shared by several endpoints.
 */

/** Money in major units per currency, e.g. {"USD": 49.99}. */
export const money = z
  .record(z.string(), z.number())
  .describe('Major units per currency, e.g. {"USD": 49.99, "EUR": 9.99}');

export const creatorRef = z.object({ id: z.string(), name: z.string() });

export const linkRef = z.object({ id: z.number().int(), domain: z.string(), slug: z.string() });

export const pagination = z.object({ next_cursor: z.string().nullable(), has_more: z.boolean() });

export const dateRange = { start_date: z.iso.date(), end_date: z.iso.date() };

export { errorSchema };

/** Error answers every session-bound read shares. */
export const readErrors = {
  400: errorSchema('invalid_parameter (with param and message)'),
  401: errorSchema('unauthorized'),
};

/**
 * Sends an answer through its published schema, which drops any field the schema does
 * not name (so nothing unpublished, such as a pixel key, leaks). A mismatch is our bug: 500.
 */
export function answer<S extends z.ZodType>(schema: S, value: z.input<S>): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new Error(`portal answer does not match its schema: ${parsed.error.message}`);
  return parsed.data;
}
