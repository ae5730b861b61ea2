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
 * What every error is answered with: HttpError its own body; zod failures, and bodies that
 * are not JSON or that Fastify refuses otherwise (its 400s), 422 invalid_request (CONTRACT 4
 * and 8: "invalid bodies"); Fastify's other client errors keep their status; the rest is a
 * logged 500.
 */
function errorAnswer(err: FastifyError | Error, req: FastifyRequest): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof ZodError) return new HttpError(422, { error: 'invalid_request', details: zodDetails(err) });
  const fe = err as FastifyError;
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new HttpError(413, { error: 'payload_too_large' });
  if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new HttpError(415, { error: 'unsupported_media_type' });
  if (fe.statusCode === 400) {
    const notJson = fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY';
    return notJson ? invalidBody('the body is not valid JSON', 'invalid_json') : invalidBody(fe.message, 'bad_request');
  }
  if (fe.statusCode && fe.statusCode > 400 && fe.statusCode < 500) return new HttpError(fe.statusCode, { error: 'bad_request', message: fe.message });
  req.log.error({ err }, 'unhandled error');
  return new HttpError(500, { error: 'internal_error' });
}

/** The app's error handler. */
export function errorHandler(err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply) {
  const { status, body } = errorAnswer(err, req);
  return reply.status(status).send(body);
}

/** The error handler of the attribution endpoints (public and webhooks): SPEC 7 gives their error bodies the form {"error":"<code>"}, nothing more. */
export function attributionErrorHandler(err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply) {
  const { status, body } = errorAnswer(err, req);
  return reply.status(status).send({ error: body.error });
}
