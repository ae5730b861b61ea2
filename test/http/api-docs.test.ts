import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: false });
});
afterAll(async () => destroyTestService(t));

const packageFile = (name: string) => readFileSync(new URL(`../../node_modules/swagger-ui-dist/${name}`, import.meta.url));
const swaggerVersion: string = JSON.parse(packageFile('package.json').toString()).version;

/** Every src= and href= of the page, in order. */
async function references(): Promise<string[]> {
  const res = await t.request({ method: 'GET', url: '/docs/api' });
  return [...res.body.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
}

describe('GET /docs/api', () => {
  it('serves the reference page with a CSP that names no other origin and allows nothing inline', async () => {
    const res = await t.request({ method: 'GET', url: '/docs/api' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(res.body).toMatch(/^<!doctype html>/);
    // Scripts only by src (the CSP would refuse an inline one), no style block or attribute, no handler.
    expect(res.body).not.toMatch(/<script(?![^>]*\ssrc=)|<style|\sstyle=|\son\w+=/i);
    expect(res.body).toContain('<main id="swagger-ui">');
  });

  it('references only files of this origin, each answering 200 with its type and a cache-for-good header', async () => {
    const refs = await references();
    expect(refs.length).toBeGreaterThanOrEqual(8);
    for (const ref of refs) expect(ref, ref).toMatch(/^\/(?!\/)/);

    const assets = refs.filter((r) => r.startsWith('/docs/api/assets/'));
    expect(assets).toEqual([
      `/docs/api/assets/swagger-ui-${swaggerVersion}.css`,
      expect.stringMatching(/^\/docs\/api\/assets\/page-[0-9a-f]{12}\.css$/),
      `/docs/api/assets/favicon-32x32-${swaggerVersion}.png`,
      `/docs/api/assets/swagger-ui-bundle-${swaggerVersion}.js`,
      `/docs/api/assets/swagger-ui-standalone-preset-${swaggerVersion}.js`,
      expect.stringMatching(/^\/docs\/api\/assets\/init-[0-9a-f]{12}\.js$/),
    ]);
    const types = { css: 'text/css; charset=utf-8', js: 'text/javascript; charset=utf-8', png: 'image/png' } as Record<string, string>;
    for (const url of assets) {
      const res = await t.request({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toBe(types[url.split('.').pop()!]);
      expect(res.headers['cache-control'], url).toBe('public, max-age=31536000, immutable');
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
      expect(res.rawPayload.length, url).toBeGreaterThan(100);
    }
    // The three documents the page switches between, and the related pages it links.
    for (const url of ['/api/v1/openapi.json', '/api/client/openapi.json', '/api/public/attribution/openapi.json']) {
      expect(refs).toContain(url);
      const doc = await t.request({ method: 'GET', url });
      expect(doc.statusCode, url).toBe(200);
      expect(doc.json().openapi, url).toBe('3.1.0');
    }
    expect(refs).toEqual(expect.arrayContaining(['/docs/sdk', '/portal/']));
  });

  it("serves the package's own bytes, gzipped for a client that accepts it", async () => {
    const url = `/docs/api/assets/swagger-ui-bundle-${swaggerVersion}.js`;
    const plain = await t.request({ method: 'GET', url });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.equals(packageFile('swagger-ui-bundle.js'))).toBe(true);

    const zipped = await t.request({ method: 'GET', url, headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(zipped.statusCode).toBe(200);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toBe('accept-encoding');
    expect(zipped.rawPayload.length).toBeLessThan(plain.rawPayload.length / 2);
    expect(gunzipSync(zipped.rawPayload).equals(packageFile('swagger-ui-bundle.js'))).toBe(true);
  });

  it('answers 404 for any other name: no path traversal, no unversioned or unlisted package file', async () => {
    for (const url of [
      '/docs/api/assets/../../package.json',
      '/docs/api/assets/..%2f..%2fpackage.json',
      '/docs/api/assets/%2e%2e%2f%2e%2e%2fpackage.json',
      '/docs/api/assets/%2e%2e/%2e%2e/package.json',
      '/docs/api/assets/..%5c..%5cpackage.json',
      '/docs/api/assets/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fsrc%2fconfig.ts',
      '/docs/api/assets/swagger-ui-bundle.js',
      `/docs/api/assets/swagger-ui-bundle-${swaggerVersion}.js.map`,
      '/docs/api/assets/index.html',
      '/docs/api/assets/package.json',
      '/docs/api/assets/init.js',
      '/docs/api/assets/',
    ]) {
      const res = await t.request({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json(), url).toEqual({ error: 'not_found' });
    }
  });

  it('answers 404 to traversal sent over a socket exactly as written (no client-side normalising)', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const status = (path: string) =>
      new Promise<number>((resolve, reject) => {
        request({ host: '127.0.0.1', port, path }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        })
          .on('error', reject)
          .end();
      });
    for (const path of ['/docs/api/assets/../../package.json', '/docs/api/assets/..%2f..%2fpackage.json', '/docs/api/assets/%2e%2e/%2e%2e/%2e%2e/package.json']) {
      expect(await status(path), path).toBe(404);
    }
    expect(await status(`/docs/api/assets/swagger-ui-${swaggerVersion}.css`)).toBe(200);
  });

  it('sends /docs/api/ to /docs/api, keeping the query', async () => {
    const res = await t.request({ method: 'GET', url: '/docs/api/?doc=portal' });
    expect(res.statusCode).toBe(301);
    expect(res.headers.location).toBe('/docs/api?doc=portal');
  });

  it('answers HEAD like GET', async () => {
    const res = await t.request({ method: 'HEAD', url: '/docs/api' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-security-policy']).toMatch(/^default-src 'none'/);
    expect(res.body).toBe('');
  });
});
