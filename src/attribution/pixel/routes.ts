import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../http/errors';
import { sha256 } from '../../secrets';

/**
 * GET /pixel.js?v=1: the brand web pixel (./pixel.js, plain browser JavaScript served as
 * written). `v` names the pixel's interface version, which snippets pasted into brands' sites
 * keep forever: v1 keeps working when the file changes, so answers may be cached for an hour
 * and revalidated with the ETag (the file's hash) after that.
 */
export const PIXEL_VERSION = '1';

const source = readFileSync(new URL('./pixel.js', import.meta.url), 'utf8');
const etag = `"${sha256(source).slice(0, 20)}"`;

/** The URL a snippet loads the pixel from. */
export function pixelUrl(publicBaseUrl: string): string {
  return `${publicBaseUrl}/pixel.js?v=${PIXEL_VERSION}`;
}

/**
 * The loader brands paste into every page (GET /api/client/attribution/setup): a stub that
 * queues calls until the pixel has loaded, the init call with the pixel key, and the pixel.
 */
export function pixelSnippet(publicBaseUrl: string, pixelKey: string): string {
  return [
    '<script>',
    '  window.svc = window.svc || function () { (svc.q = svc.q || []).push(arguments); };',
    `  svc('init', ${JSON.stringify(pixelKey)});`,
    '</script>',
    `<script async src="${pixelUrl(publicBaseUrl).replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"></script>`,
  ].join('\n');
}

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
