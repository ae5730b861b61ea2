import type { FastifyRequest } from 'fastify';
import { HttpError } from './errors';

/**
 * Text the stores cannot hold (CONTRACT 10): NUL (Postgres text) and a lone UTF-16 surrogate
 * (jsonb; node-pg would turn it into U+FFFD). One check for bodies, query strings, path ids, cursors
 * and the ledger's drafts.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const isStorableText = (text: string): boolean => !text.includes('\u0000') && !LONE_SURROGATE.test(text);

/** Whether every string of a parsed JSON value, keys included, is storable. Iterative: nesting depth cannot overflow the stack. */
export function isStorableValue(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length) {
    const v = pending.pop();
    if (typeof v === 'string') {
      if (!isStorableText(v)) return false;
    } else if (Array.isArray(v)) {
      for (const item of v) pending.push(item); // not push(...v): a huge array would overflow the argument list
    } else if (v !== null && typeof v === 'object') {
      for (const [key, item] of Object.entries(v)) {
        if (!isStorableText(key)) return false;
        pending.push(item);
      }
    }
  }
  return true;
}

/** The 404 code of a path id by namespace: SPEC 7 names the webhook's; elsewhere CONTRACT 8's. */
const notFoundCode = (url: string) => (url.startsWith('/api/webhooks/') ? 'unknown_connection' : 'not_found');

/**
 * A hook for every route: a query parameter holding unstorable text answers 400
 * invalid_parameter naming it (the Data API's shape, which portal and internal lists share);
 * a path id holding it answers 404, as an id no record can have.
 */
export async function refuseUnstorableText(req: FastifyRequest): Promise<void> {
  const params = (req.params ?? {}) as Record<string, unknown>;
  if (!isStorableValue(params)) throw new HttpError(404, { error: notFoundCode(req.url) });
  for (const [param, value] of Object.entries((req.query ?? {}) as Record<string, unknown>)) {
    if (!isStorableText(param) || !isStorableValue(value)) {
      throw new HttpError(400, { error: 'invalid_parameter', param, message: 'text may not hold NUL or a lone UTF-16 surrogate' });
    }
  }
}
