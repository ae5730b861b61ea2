import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkDocs } from '../../src/http/docs';
import { renderMarkdown } from '../../src/http/markdown';
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
    for (const file of ['../../docs/sdk.md', '../../sdk/react-native/README.md', '../../sdk/ios/README.md', '../../sdk/vectors/README.md']) {
      for (const heading of headingsOf(file)) expect(headings, `${file}: ${heading}`).toContain(heading);
    }
    const base = t.config.publicBaseUrl;
    expect(html).toContain(`${base}/api/public/attribution/installs`);
    expect(html).toContain(`endpoint: &#39;${base}&#39;`);
    for (const key of ['svc_install_id', 'svc_install_reported', 'svc_pending_purchases', 'appAccountToken', 'SvcAttribution']) expect(html).toContain(key);
    expect(html).not.toContain('{base_url}');
    // The READMEs show a real-looking URL in the repository; the page shows this deployment's.
    expect(html).not.toContain('svc.example.com');
    expect(html).toContain(`endpoint: URL(string: &quot;${base}&quot;)`);
    // The Swift package's README sits beside the React Native one, in the contents too.
    const order = ['<article id="guide">', '<article id="react-native">', '<article id="ios">', '<article id="vectors">'].map((a) => html.indexOf(a));
    expect(order.every((at, i) => at > (order[i - 1] ?? -1))).toBe(true);
    expect(html).toMatch(/<nav[\s\S]*href="#ios-[^"]*"[\s\S]*<\/nav>/);
    // The deep-link diagrams, from this origin.
    expect(html).toContain('<img src="img/deep-link-deferred.svg" alt="Deferred deep link:');
    expect(html).toContain('<img src="img/deep-link-direct.svg" alt="Direct deep link:');
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
    const images = [...res.body.matchAll(/<img src="([^"]+)"/g)].map((m) => m[1]!);
    expect(images).toEqual(['img/deep-link-deferred.svg', 'img/deep-link-direct.svg']);
    const rest = res.body.replace('<link rel="icon" href="data:,">', '').replace(/<img src="img\/[a-z-]+\.svg" alt="[^"<>]*">/g, '');
    // Only the markup is checked: code examples may show `style=` or `onPress` as escaped text.
    const tags = [...rest.matchAll(/<[^>]*>/g)].map((m) => m[0]).join('');
    expect(tags).not.toMatch(/<script|<link|<img|<iframe|\ssrc=|\sstyle=|\son\w+=/i);
  });

  it('serves the diagrams it shows beside it (the page is at /docs/sdk, so img/… is /docs/img/…): SVG that runs and loads nothing', async () => {
    for (const name of ['deep-link-deferred.svg', 'deep-link-direct.svg']) {
      const res = await t.request({ method: 'GET', url: `/docs/img/${name}` });
      expect(res.statusCode, name).toBe(200);
      expect(res.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(String(res.headers['content-security-policy'])).toMatch(/^default-src 'none'/);
      expect(res.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]* role="img"/);
      expect(res.body).toMatch(/<title id="t">(Deferred|Direct) deep link<\/title>/);
      expect(res.body).not.toMatch(/<script|\son\w+=|href=|url\(/i);
    }
    expect((await t.request({ method: 'GET', url: '/docs/img/portal-overview.png' })).statusCode).toBe(404);
    expect((await t.request({ method: 'GET', url: '/docs/img/..%2Fsdk.md' })).statusCode).toBe(404);
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

  it('renders an image only from the page’s own origin (a relative path); any other shows its alt text', () => {
    const { html } = renderMarkdown('![A](img/a.svg) ![B](https://cdn.example/b.svg) ![C](//cdn.example/c.svg) ![D](javascript:alert(1).svg) ![E"](img/e.png)');
    expect(html).toBe('<p><img src="img/a.svg" alt="A"> B C ![D](javascript:alert(1).svg) <img src="img/e.png" alt="E&quot;"></p>');
  });

  it('escapes the public base URL it writes into the page', () => {
    const { html } = sdkDocs('https://svc.example.com/"><script>alert(1)</script>');
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });
});
