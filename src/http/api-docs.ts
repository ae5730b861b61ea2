import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { sameOriginCsp } from './csp';

/**
 * GET /docs/api (public, docs/api.md): the interactive reference of the Data API's, the
 * portal's and the public attribution API's OpenAPI documents, drawn by Swagger UI (npm swagger-ui-dist) from this origin.
 * Only a fixed list of files is served, each under a name that carries its version or hash.
 */
const SWAGGER_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const SWAGGER_VERSION: string = JSON.parse(readFileSync(join(SWAGGER_DIR, 'package.json'), 'utf8')).version;
const OWN_DIR = new URL('./api-docs/', import.meta.url).pathname;

const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', png: 'image/png' };

type Asset = { path: string; type: string; body?: Buffer; gzip?: Buffer };

/** `swagger-ui.css` in the package is served as `swagger-ui-5.35.0.css`; our files by content hash. */
function asset(dir: string, file: string, tag: string): [string, Asset] {
  const dot = file.lastIndexOf('.');
  const ext = file.slice(dot + 1);
  return [`${file.slice(0, dot)}-${tag}.${ext}`, { path: join(dir, file), type: TYPES[ext]! }];
}

const ownTag = (file: string) => createHash('sha256').update(readFileSync(join(OWN_DIR, file))).digest('hex').slice(0, 12);

const ASSETS = new Map<string, Asset>([
  ...['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png'].map((f) => asset(SWAGGER_DIR, f, SWAGGER_VERSION)),
  ...['page.css', 'init.js'].map((f) => asset(OWN_DIR, f, ownTag(f))),
]);
const url = (prefix: string) => `/docs/api/assets/${[...ASSETS.keys()].find((name) => name.startsWith(`${prefix}-`))}`;

/**
 * Scripts, styles, images and fetches from this origin only, nothing inline (init.js replaces
 * the one part of Swagger UI that needs an inline <style>, its logo). `data:` images are the
 * icons inside swagger-ui.css.
 */
export const API_DOCS_CSP = sameOriginCsp({ forms: 'none' });

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference</title>
<link rel="stylesheet" href="${url('swagger-ui')}">
<link rel="stylesheet" href="${url('page')}">
<link rel="icon" type="image/png" href="${url('favicon-32x32')}">
</head>
<body>
<nav class="api-docs-links" aria-label="Related"><span>Data API: <a href="/api/v1/openapi.json">openapi.json</a></span><span>Portal API: <a href="/api/client/openapi.json">openapi.json</a></span><span>Attribution API: <a href="/api/public/attribution/openapi.json">openapi.json</a></span><a href="/docs/sdk">SDK docs</a><a href="/portal/">Portal</a></nav>
<main id="swagger-ui"><noscript>This reference needs JavaScript; the documents themselves are the JSON files linked above.</noscript></main>
<script src="${url('swagger-ui-bundle')}"></script>
<script src="${url('swagger-ui-standalone-preset')}"></script>
<script src="${url('init')}"></script>
</body>
</html>
`;

/** Read and compressed on first use: most processes (workers, tests) never serve them. */
function load(a: Asset, gzip: boolean): Buffer {
  a.body ??= readFileSync(a.path);
  if (!gzip) return a.body;
  a.gzip ??= gzipSync(a.body);
  return a.gzip;
}

export async function apiDocsRoutes(app: FastifyInstance) {
  app.addHook('onSend', async (_req, reply, payload) => {
    reply.header('x-content-type-options', 'nosniff');
    return payload;
  });

  app.get('/docs/api', async (_req, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', API_DOCS_CSP)
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
      .header('cache-control', 'no-cache')
      .send(PAGE),
  );

  app.get('/docs/api/', async (req, reply) => {
    const query = req.url.indexOf('?');
    return reply.redirect(`/docs/api${query < 0 ? '' : req.url.slice(query)}`, 301);
  });

  // The name must be one of ASSETS' keys: nothing else in node_modules or src is reachable.
  app.get('/docs/api/assets/:name', async (req, reply) => {
    const a = ASSETS.get((req.params as { name: string }).name);
    if (!a) return reply.status(404).send({ error: 'not_found' });
    const gzip = a.type !== 'image/png' && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    if (gzip) reply.header('content-encoding', 'gzip');
    return reply
      .type(a.type)
      .header('vary', 'accept-encoding')
      .header('cache-control', 'public, max-age=31536000, immutable')
      .send(load(a, gzip));
  });
}
