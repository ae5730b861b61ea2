import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest, preParsingHookHandler } from 'fastify';
import { invalidBody, refuse } from '../refusal';
import { isStorableValue } from '../storable-text';

/**
 * The app's JSON body parser (and text/plain on the public attribution routes), registered with
 * `parseAs: 'buffer'`; an empty body is no body. Bytes that are not UTF-8 are refused as malformed
 * JSON, never decoded to U+FFFD and recorded. NUL or a lone surrogate refuses the body whole with
 * 422 (docs/api.md): the stores cannot hold them, and one in a batched statement would fail the
 * requests sharing it.
 */
export function jsonBodyParser(app: FastifyInstance) {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  return (req: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
    if (typeof body !== 'string' && !isUtf8(body)) return done(invalidBody('the body is not valid JSON (not UTF-8)', 'invalid_json'));
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

/**
 * A preParsing hook: a body sent with a Content-Encoding other than `identity` (gzip, br, ...) is
 * 415 unsupported_media_type (docs/api.md); the service decodes none, and reading compressed bytes
 * as JSON or a signed payload would only fail later and less clearly.
 */
export const refuseContentEncoding: preParsingHookHandler = (req, _reply, payload, done) => {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && hasBody(req) && !isIdentity(encoding)) done(refuse(415, 'unsupported_media_type'));
  else done(null, payload);
};

const isIdentity = (encoding: string) =>
  encoding.split(',').every((coding) => {
    const c = coding.trim().toLowerCase();
    return c === 'identity' || c === '';
  });

function hasBody(req: FastifyRequest): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
