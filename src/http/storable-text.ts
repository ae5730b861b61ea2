import type { FastifyReply, FastifyRequest } from 'fastify';
import { isStorableText, isStorableValue } from '../storable-text';
import { type Refusal, refuse } from '../refusal';

/** The 404 code of a path id by namespace: the billing webhook's `unknown_connection`, elsewhere `not_found`. */
const notFoundCode = (url: string) => (url.startsWith('/api/webhooks/') ? 'unknown_connection' : 'not_found');

/**
 * A hook for every route: a query parameter holding unstorable text answers 400
 * invalid_parameter naming it (the Data API's shape, which portal and internal lists share);
 * a path id holding it answers 404, as an id no record can have.
 */
export function refuseUnstorableText(req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  done(unstorableRefusal(req));
}

function unstorableRefusal(req: FastifyRequest): Refusal | undefined {
  const params = (req.params ?? {}) as Record<string, unknown>;
  if (!isStorableValue(params)) return refuse(404, notFoundCode(req.url));
  for (const [param, value] of Object.entries((req.query ?? {}) as Record<string, unknown>)) {
    if (!isStorableText(param) || !isStorableValue(value)) {
      return refuse(400, 'invalid_parameter', { param, message: 'text may not hold NUL or a lone UTF-16 surrogate' });
    }
  }
  return undefined;
}
