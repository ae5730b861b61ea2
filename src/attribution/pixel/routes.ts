import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../refusal';
import { sha256 } from '../../secrets';
import { PIXEL_VERSION } from './snippet';

/**
 * GET /pixel.js?v=1: the brand web pixel (./pixel.js, plain browser JavaScript served as
 * written). Any later pixel.js still speaks v1, so answers may be cached for an hour and
 * revalidated with the ETag (the file's hash) after that.
 */
const source = readFileSync(new URL('./pixel.js', import.meta.url), 'utf8');
const etag = `"${sha256(source).slice(0, 20)}"`;

export async function pixelRoutes(app: FastifyInstance) {
  app.get('/pixel.js', async (req, reply) => {
    const { v } = req.query as { v?: unknown };
    if (v !== undefined && v !== PIXEL_VERSION) throw notFound();
    reply
      .header('content-type', 'text/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=3600, stale-while-revalidate=86400')
      .header('etag', etag)
      .header('x-content-type-options', 'nosniff');
    const ifNoneMatch = req.headers['if-none-match'];
    if (ifNoneMatch?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) {
      return reply.status(304).send();
    }
    return source;
  });
}
