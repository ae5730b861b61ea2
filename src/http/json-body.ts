import type { FastifyInstance, FastifyRequest } from 'fastify';
import { invalidBody } from './errors';
import { isStorableValue } from '../storable-text';

/**
 * The app's JSON body parser (and text/plain on the public attribution routes); an empty body is
 * no body. NUL or a lone surrogate refuses the body whole with 422 (CONTRACT 10): the stores cannot
 * hold them, and one in a batched statement would fail the requests sharing it.
 */
export function jsonBodyParser(app: FastifyInstance) {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  return (req: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
    const text = body.toString();
    if (text === '') return done(null, undefined);
    // Raw NUL is not valid JSON and UTF-8 cannot carry a lone surrogate: only a \u escape can make either.
    if (!text.includes('\\u')) return parseJson(req, text, done);
    parseJson(req, text, (err, parsed) => {
      if (err) return done(err);
      if (!isStorableValue(parsed)) {
        return done(invalidBody('text may not contain the NUL character or a lone UTF-16 surrogate', 'unstorable_text'));
      }
      done(null, parsed);
    });
  };
}
