import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkDocs } from '../../src/http/docs';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: false });
});
afterAll(async () => destroyTestService(t));

/** The headings (#, ## and ###) of a Markdown file outside its code blocks, as text without backticks. */
function headingsOf(path: string): string[] {
  let inCode = false;
  return readFileSync(new URL(path, import.meta.url), 'utf8')
    .split('\n')
    .filter((l) => {
      if (l.startsWith('```')) inCode = !inCode;
      return !inCode && /^#{1,3} /.test(l);
    })
    .map((l) => l.replace(/^#+ /, '').replaceAll('`', ''));
}

const textOf = (html: string) => html.replace(/<[^>]+>/g, '').replaceAll('&amp;', '&').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&quot;', '"').replaceAll('&#39;', "'");

describe('GET /docs/sdk', () => {
  it('serves the SDK documentation as an HTML page made from the guide and the packages’ READMEs', async () => {
    const res = await t.request({ method: 'GET', url: '/docs/sdk' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const html = res.body;
    expect(html).toMatch(/^<!doctype html>/);
    const headings = [...html.matchAll(/<h([1-6]) id="[^"]+">([\s\S]*?)<\/h\1>/g)].map((m) => textOf(m[2]!));
    for (const file of ['../../docs/sdk.md', '../../sdk/react-native/README.md', '../../sdk/vectors/README.md']) {
      for (const heading of headingsOf(file)) expect(headings, `${file}: ${heading}`).toContain(heading);
    }
    const base = t.config.publicBaseUrl;
    expect(html).toContain(`${base}/api/public/attribution/installs`);
    expect(html).toContain(`endpoint: &#39;${base}&#39;`);
    for (const key of ['svc_install_id', 'svc_install_reported', 'svc_pending_purchases', 'appAccountToken', 'SvcAttribution']) expect(html).toContain(key);
    expect(html).not.toContain('{base_url}');
    // The README's `Promise<string \| null>` cell is shown escaped, as text.
    expect(html).toContain('<code>{ getItem(key): Promise&lt;string | null&gt;, setItem(key, value): Promise&lt;void&gt; }</code>');
  });

  it('has a Content-Security-Policy that allows only its own style block and loads nothing from another origin', async () => {
    const res = await t.request({ method: 'GET', url: '/docs/sdk' });
    const csp = String(res.headers['content-security-policy']);
    const style = /<style>([\s\S]*?)<\/style>/.exec(res.body)![1]!;
    const hash = createHash('sha256').update(style).digest('base64');
    expect(csp).toBe(`default-src 'none'; style-src 'sha256-${hash}'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`);
    // An empty icon of its own: the browser asks for no /favicon.ico (a 404 in its console).
    expect(res.body).toContain('<link rel="icon" href="data:,">');
    expect(res.body.replace('<link rel="icon" href="data:,">', '')).not.toMatch(/<script|<link|<img|<iframe|\ssrc=|\sstyle=|\son\w+=/i);
  });

  it('answers HEAD like GET, and the same text as Markdown at /docs/sdk.md', async () => {
    const head = await t.request({ method: 'HEAD', url: '/docs/sdk' });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-security-policy']).toMatch(/^default-src 'none'/);
    const md = await t.request({ method: 'GET', url: '/docs/sdk.md' });
    expect(md.statusCode).toBe(200);
    expect(md.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(md.body).toContain('# @svc/react-native');
    expect(md.body).toContain(`POST ${t.config.publicBaseUrl}/api/public/attribution/events`);
  });

  it('escapes the public base URL it writes into the page', () => {
    const { html } = sdkDocs('https://svc.example.com/"><script>alert(1)</script>');
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });
});
