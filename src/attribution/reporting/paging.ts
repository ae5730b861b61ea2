import { z } from 'zod';
import { integerParam } from '../../integer-param';
import { isStorableValue } from '../../storable-text';

/**
 * Keyset paging for portal and internal lists (docs/api.md#links-codes-and-domains): `limit` 1..100 (default 50)
 * and an opaque `cursor` holding the sort key of the last row answered.
 */

/** The query parameters of a paged list whose sort key is parsed by `key`. */
export function pageParams<K extends z.ZodType<readonly unknown[]>>(key: K) {
  return {
    limit: integerParam(z.coerce.number().int().min(1).max(100).default(50)),
    cursor: z
      .string()
      .transform((value, ctx): z.output<K> => {
        const decoded = decodeJson(value);
        // A cursor's text goes into queries as a parameter: the stores must be able to hold it (docs/hardening.md#text-the-stores-cannot-hold).
        const parsed = isStorableValue(decoded) ? key.safeParse(decoded) : undefined;
        if (parsed?.success) return parsed.data;
        ctx.addIssue({ code: 'custom', message: 'invalid cursor' });
        return z.NEVER;
      })
      .optional(),
  };
}

export type Pagination = { next_cursor: string | null; has_more: boolean };

/**
 * Cuts rows fetched with `limit + 1` to one page; the extra row only tells that more
 * follow. `key` gives a row's sort key, which becomes the next cursor.
 */
export function toPage<T>(rows: T[], limit: number, key: (row: T) => readonly unknown[]): { data: T[]; pagination: Pagination } {
  const data = rows.slice(0, limit);
  const has_more = rows.length > limit;
  const last = data.at(-1);
  const next_cursor = has_more && last ? Buffer.from(JSON.stringify(key(last))).toString('base64url') : null;
  return { data, pagination: { next_cursor, has_more } };
}

function decodeJson(cursor: string): unknown {
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}
