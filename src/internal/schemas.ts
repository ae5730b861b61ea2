import { z } from 'zod';
import { errorSchema } from '../http/openapi';

/**
 * A URL the internal API stores (logo, link destinations, store pages): an absolute http(s) URL
 * with a host and no space or control character, so no `javascript:`, `data:` or header-breaking
 * CRLF reaches a page, a redirect or an answer (docs/api.md).
 */
export const storedUrl = (max = 2048) =>
  z
    .string()
    .max(max)
    .refine(isStorableUrl, 'must be an absolute http(s) URL without spaces or control characters')
    .meta({ format: 'uri' });

function isStorableUrl(value: string): boolean {
  // Checked on the text: the URL parser silently drops tabs and newlines and trims spaces.
  if (!/^https?:\/\/[^/?#]/i.test(value) || /[\s\p{Cc}]/u.test(value)) return false;
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}

/** How the internal routes document their answers (GET /api/internal/openapi.json). */
export const answers = {
  page: (what: string) => ({ description: `A page of ${what}: {data, pagination: {next_cursor, has_more}}; follow next_cursor` }),
  item: (what: string) => ({ description: what }),
};

/** Every internal route needs the admin JWT (CONTRACT 3); a refused query, path or body is 422. */
const common = {
  401: errorSchema('unauthorized'),
  403: errorSchema('forbidden: not an operator token'),
  422: errorSchema('invalid_request, with details [{path, message, code, ...zod fields}]'),
};

export const errors = {
  code: errorSchema,
  // Lists: a cursor that does not decode, or a limit not in decimal digits, is 400 as on the other APIs.
  read: { 400: errorSchema('invalid_parameter, with param and message'), ...common },
  write: common,
  one: { 404: errorSchema('not_found') },
};
