import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ZodError } from 'zod';

/** An error answered as `status` with a JSON body, e.g. `{"error":"not_found"}`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(String(body.error ?? status));
  }
}

export const notFound = () => new HttpError(404, { error: 'not_found' });

/** A request body that cannot be read at all: 422 invalid_request (CONTRACT 4 and 8), `code` naming why. */
export const invalidBody = (message: string, code: string) =>
  new HttpError(422, { error: 'invalid_request', details: [{ path: '', message, code }] });

/** Zod issues as answered in `details` of a 422 (CONTRACT 4). */
export function zodDetails(err: ZodError) {
  return err.issues.map((i) => ({ path: i.path.join('.'), message: i.message, code: i.code }));
}

/**
 * The one error handler: HttpError answers its own body; zod failures, and bodies that are
 * not JSON or that Fastify refuses otherwise (its 400s), become 422 invalid_request
 * (CONTRACT 4 and 8: "invalid bodies"); Fastify's other client errors keep their status; the
 * rest is a logged 500.
 */
export function errorHandler(err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply) {
  if (err instanceof HttpError) return reply.status(err.status).send(err.body);
  if (err instanceof ZodError) return reply.status(422).send({ error: 'invalid_request', details: zodDetails(err) });
  const fe = err as FastifyError;
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return reply.status(413).send({ error: 'payload_too_large' });
  if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return reply.status(415).send({ error: 'unsupported_media_type' });
  if (fe.statusCode === 400) {
    const notJson = fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY';
    const refusal = notJson ? invalidBody('the body is not valid JSON', 'invalid_json') : invalidBody(fe.message, 'bad_request');
    return reply.status(refusal.status).send(refusal.body);
  }
  if (fe.statusCode && fe.statusCode > 400 && fe.statusCode < 500) {
    return reply.status(fe.statusCode).send({ error: 'bad_request', message: fe.message });
  }
  req.log.error({ err }, 'unhandled error');
  return reply.status(500).send({ error: 'internal_error' });
}
