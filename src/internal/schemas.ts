import { errorSchema } from '../http/openapi';

// storedUrl lives with the other storable-value checks: placements validate their URLs with it too.
export { storedUrl } from '../storable-text';

/** How the internal routes document their answers (GET /api/internal/openapi.json). */
export const answers = {
  page: (what: string) => ({ description: `A page of ${what}: {data, pagination: {next_cursor, has_more}}; follow next_cursor` }),
  item: (what: string) => ({ description: what }),
};

/** Every internal route needs the admin JWT (docs/api.md#internal-set-up-endpoints); a refused query, path or body is 422. */
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
