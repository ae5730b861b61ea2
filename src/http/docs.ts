import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { escapeHtml, type Heading, renderMarkdown } from './markdown';

/**
 * GET /docs/sdk (public, the portal's `sdk_docs_url`, docs/sdk.md): docs/sdk.md and the READMEs of
 * the React Native and Swift packages and of sdk/vectors as one HTML page, with the examples' base
 * URL replaced by PUBLIC_BASE_URL so they run as pasted. GET /docs/sdk.md answers the Markdown.
 */
const SOURCES = [
  { id: 'guide', file: '../../docs/sdk.md' },
  { id: 'react-native', file: '../../sdk/react-native/README.md' },
  { id: 'ios', file: '../../sdk/ios/README.md' },
  { id: 'vectors', file: '../../sdk/vectors/README.md' },
].map((s) => ({ ...s, markdown: readFileSync(new URL(s.file, import.meta.url), 'utf8') }));

/** The base URL the files show: `{base_url}` where a file is only read through this page, a real-looking one in the READMEs. */
const BASE_URL_PLACEHOLDERS = ['{base_url}', 'https://svc.example.com'];

/** The guide's images (docs/img/*.svg), served beside the page at /docs/img/<name>. */
const IMAGES_DIR = new URL('../../docs/img/', import.meta.url);
const IMAGES = new Map(
  readdirSync(IMAGES_DIR)
    .filter((f) => /^[a-z0-9-]+\.svg$/.test(f))
    .map((f) => [f, readFileSync(new URL(f, IMAGES_DIR), 'utf8')]),
);
/** An SVG opened on its own runs nothing and loads nothing; its styles are its own attributes. */
export const SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'";

const STYLE = `
:root { color-scheme: light dark; --fg: #1c1e21; --muted: #5b616b; --bg: #fff; --code: #f3f4f6; --line: #d9dce1; --accent: #0b57d0; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8eb; --muted: #a3a9b3; --bg: #16181c; --code: #23262c; --line: #3a3f47; --accent: #8ab4f8; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 16px/1.6 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.page { max-width: 52rem; margin: 0 auto; padding: 1.5rem 1rem 4rem; }
nav { border: 1px solid var(--line); border-radius: 8px; padding: 0.75rem 1rem; margin: 1rem 0 2rem; font-size: 0.95rem; }
nav ul { margin: 0.25rem 0; padding-left: 1.2rem; }
nav > ul { padding-left: 0; list-style: none; }
nav > ul > li { margin: 0.4rem 0; font-weight: 600; }
nav ul ul li { font-weight: 400; }
article { border-top: 1px solid var(--line); padding-top: 1rem; margin-top: 2.5rem; }
h1 { font-size: 1.8rem; line-height: 1.25; margin: 0.5rem 0 1rem; }
h2 { font-size: 1.35rem; margin: 2rem 0 0.75rem; }
h3 { font-size: 1.1rem; margin: 1.5rem 0 0.5rem; }
a { color: var(--accent); }
code { font: 0.88em/1.5 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--code); border-radius: 4px; padding: 0.1em 0.3em; overflow-wrap: break-word; }
pre { background: var(--code); border-radius: 8px; padding: 0.8rem 1rem; overflow-x: auto; }
pre code { padding: 0; background: none; overflow-wrap: normal; white-space: pre; }
.table { overflow-x: auto; margin: 1rem 0; }
table { border-collapse: collapse; min-width: 100%; font-size: 0.93rem; }
th, td { border: 1px solid var(--line); padding: 0.4rem 0.6rem; text-align: left; vertical-align: top; }
th { background: var(--code); }
img { max-width: 100%; height: auto; display: block; margin: 1rem auto; }
blockquote { margin: 1rem 0; padding-left: 1rem; border-left: 3px solid var(--line); color: var(--muted); }
.lede { color: var(--muted); }
`;
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');
/** No script, no frames, no other origin: only the page's own style block (by hash) and same-origin images. */
export const SDK_DOCS_CSP = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

function toc(docs: { id: string; headings: Heading[] }[]): string {
  const entries = docs.map(({ headings }) => {
    const [title, ...rest] = headings;
    const subs = rest.filter((h) => h.level === 2).map((h) => `<li><a href="#${h.id}">${escapeHtml(h.text)}</a></li>`);
    return `<li><a href="#${title!.id}">${escapeHtml(title!.text)}</a>${subs.length ? `<ul>${subs.join('')}</ul>` : ''}</li>`;
  });
  return `<nav aria-label="Contents"><ul>${entries.join('')}</ul></nav>`;
}

/** The page and its Markdown, for a deployment's public URL. */
export function sdkDocs(publicBaseUrl: string) {
  const ids = new Set<string>();
  const docs = SOURCES.map((s) => {
    const markdown = BASE_URL_PLACEHOLDERS.reduce((text, placeholder) => text.replaceAll(placeholder, publicBaseUrl), s.markdown);
    return { id: s.id, markdown, ...renderMarkdown(markdown, { idPrefix: s.id, ids }) };
  });
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Mobile SDK documentation</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body>
<div class="page">
<p class="lede">Mobile SDK documentation for <code>${escapeHtml(publicBaseUrl)}</code> · <a href="/docs/sdk.md">Markdown</a></p>
${toc(docs)}
${docs.map((d) => `<article id="${d.id}">\n${d.html}\n</article>`).join('\n')}
</div>
</body>
</html>
`;
  return { html, markdown: docs.map((d) => d.markdown).join('\n\n---\n\n') };
}

export async function docsRoutes(app: FastifyInstance, { publicBaseUrl }: { publicBaseUrl: string }) {
  const { html, markdown } = sdkDocs(publicBaseUrl);
  app.get('/docs/sdk', async (_req, reply) =>
    reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', SDK_DOCS_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'public, max-age=300')
      .send(html),
  );
  app.get('/docs/sdk.md', async (_req, reply) =>
    reply.header('content-type', 'text/markdown; charset=utf-8').header('x-content-type-options', 'nosniff').header('cache-control', 'public, max-age=300').send(markdown),
  );
  for (const [name, svg] of IMAGES) {
    app.get(`/docs/img/${name}`, async (_req, reply) =>
      reply
        .header('content-type', 'image/svg+xml; charset=utf-8')
        .header('content-security-policy', SVG_CSP)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'public, max-age=300')
        .send(svg),
    );
  }
}
