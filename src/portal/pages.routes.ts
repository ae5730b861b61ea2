import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { sameOriginCsp } from '../http/csp';
import { portalFiles } from './pages.build';

/**
 * GET /portal/: the brand portal in a browser (docs/portal.md), served from this origin. Every
 * page path answers the same index.html; its script reads the path and asks the portal API
 * for the session. Assets have content-hashed names, so they are cached for good.
 */
export const PORTAL_PAGES = ['', 'links', 'codes', 'events', 'setup', 'domains', 'connections', 'webhooks'];

/** Scripts and styles from this origin only: no inline script or style, nothing from elsewhere. */
export const PORTAL_CSP = sameOriginCsp({ forms: 'self' });

const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', html: 'text/html; charset=utf-8' };

export async function portalPageRoutes(app: FastifyInstance) {
  const files = await portalFiles();
  const index = files.get('index.html')!;
  const indexTag = `"${createHash('sha256').update(index).digest('base64url').slice(0, 22)}"`;

  app.addHook('onSend', async (_req, reply, payload) => {
    reply.header('content-security-policy', PORTAL_CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'same-origin');
    reply.header('x-frame-options', 'DENY');
    return payload;
  });

  app.get('/portal', async (_req, reply) => reply.redirect('/portal/', 301));
  for (const page of PORTAL_PAGES) {
    app.get(`/portal/${page}`, async (req, reply) => {
      reply.header('cache-control', 'no-cache').header('etag', indexTag);
      if (req.headers['if-none-match'] === indexTag) return reply.status(304).send();
      return reply.type(TYPES.html!).send(index);
    });
  }
  // A page path with a trailing slash goes to the page; any other path is a 404 that a person
  // reads in the portal's own frame ("Page not found", a link to the overview), not as JSON.
  app.get('/portal/*', async (req, reply) => {
    const path = req.url.split('?')[0]!;
    const page = path.slice('/portal/'.length, -1);
    if (path.endsWith('/') && page && PORTAL_PAGES.includes(page)) return reply.redirect(`/portal/${page}${req.url.slice(path.length)}`, 301);
    return reply.status(404).header('cache-control', 'no-cache').type(TYPES.html!).send(index);
  });
  app.get('/portal/assets/:name', async (req, reply) => {
    const { name } = req.params as { name: string };
    const body = name === 'index.html' ? undefined : files.get(name);
    if (!body) return reply.status(404).send({ error: 'not_found' });
    return reply
      .type(TYPES[name.split('.').pop()!] ?? 'application/octet-stream')
      .header('cache-control', 'public, max-age=31536000, immutable')
      .send(body);
  });
}
