import type { FastifyInstance, FastifyRequest } from 'fastify';
import { invalidBody } from './errors';

/** A `\u0000` escape not itself escaped (an odd number of backslashes before it). */
const NUL_ESCAPE = /(?:^|[^\\])(?:\\\\)*\\u0000/;

/**
 * The app's JSON body parser (application/json, and text/plain on the public attribution
 * routes). An empty body is no body: clients that always send the JSON content type also send
 * it on body-less POSTs and DELETEs. A body holding the NUL character is refused whole with 422:
 * Postgres cannot store it, and one such value in a batched statement would fail the other
 * requests sharing that statement.
 */
export function jsonBodyParser(app: FastifyInstance) {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  return (req: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
    const text = body.toString();
    if (text === '') return done(null, undefined);
    if (text.includes('\\u0000') && NUL_ESCAPE.test(text)) {
      return done(invalidBody('text may not contain the NUL character (\\u0000)', 'nul_character'));
    }
    parseJson(req, text, done);
  };
}
