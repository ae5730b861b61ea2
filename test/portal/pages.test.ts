import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PORTAL_CSP, PORTAL_PAGES } from '../../src/portal/pages.routes';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

/**
 * How the service serves the portal's pages (docs/portal.md): one index.html for every page
 * path, content-hashed assets from this origin, a CSP without inline script or style. What
 * the pages do in a browser: portal.browser.test.ts.
 */
let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: false });
});
afterAll(async () => destroyTestService(t));

const get = (url: string, headers: Record<string, string> = {}) => t.request({ method: 'GET', url, headers });

describe('GET /portal/', () => {
  it('answers the page shell with a CSP that allows scripts and styles from this origin only', async () => {
    const res = await get('/portal/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(PORTAL_CSP);
    expect(PORTAL_CSP).toContain("script-src 'self';");
    expect(PORTAL_CSP).toContain("style-src 'self';");
    expect(PORTAL_CSP).not.toMatch(/unsafe|\*|https?:/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-cache');
    // No inline script or style, and nothing from another origin.
    expect(res.body).not.toMatch(/<script>|<style|style=/);
    expect(res.body).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(res.body.match(/<script type="module" src="\/portal\/assets\/app-\w+\.js"><\/script>/)).not.toBeNull();
    expect(res.body.match(/<link rel="stylesheet" href="\/portal\/assets\/app-\w+\.css">/)).not.toBeNull();

    const again = await get('/portal/', { 'if-none-match': String(res.headers.etag) });
    expect(again.statusCode).toBe(304);
    // The policy is the pages' own: the API beside them keeps its headers.
    expect((await get('/api/client/openapi.json')).headers['content-security-policy']).toBeUndefined();
  });

  it('answers the same shell on every page path, redirects /portal and refuses unknown paths', async () => {
    const shell = (await get('/portal/')).body;
    for (const page of PORTAL_PAGES) {
      const res = await get(`/portal/${page}`);
      expect(res.statusCode, page).toBe(200);
      expect(res.body, page).toBe(shell);
    }
    const bare = await get('/portal');
    expect(bare.statusCode).toBe(301);
    expect(bare.headers.location).toBe('/portal/');
    const unknown = await get('/portal/admin');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toBe(shell); // its script shows "Page not found" in the portal's frame
    const slash = await get('/portal/links/?period=7d');
    expect(slash.statusCode).toBe(301);
    expect(slash.headers.location).toBe('/portal/links?period=7d');
    expect((await get('/portal/assets/app-NOPE.js')).statusCode).toBe(404);
    expect((await get('/portal/assets/index.html')).statusCode).toBe(404);
  });

  it('serves the bundled script and style sheet for good (their names change with their content)', async () => {
    const shell = (await get('/portal/')).body;
    const js = shell.match(/\/portal\/assets\/app-\w+\.js/)![0];
    const css = shell.match(/\/portal\/assets\/app-\w+\.css/)![0];
    const script = await get(js);
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(script.headers['content-security-policy']).toBe(PORTAL_CSP);
    // The page script, which calls the portal API, with the chart library bundled in (no output of the whole bundle on failure).
    expect(script.body.includes('/api/client')).toBe(true);
    expect(script.body.includes('u-legend')).toBe(true);
    const sheet = await get(css);
    expect(sheet.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(sheet.body.includes('.u-legend')).toBe(true); // uPlot's styles, bundled with ours
    expect(sheet.body.includes('.metric')).toBe(true);
  });
});

describe('the browser code', () => {
  it('type-checks against the DOM (the root tsconfig leaves src/portal/web to its own)', async () => {
    const tsc = new URL('../../node_modules/.bin/tsc', import.meta.url).pathname;
    const project = new URL('../../src/portal/web', import.meta.url).pathname;
    const { stdout } = await promisify(execFile)(tsc, ['--noEmit', '-p', project]).catch((err) => ({ stdout: `${err.stdout}${err.stderr}` }));
    expect(stdout).toBe('');
  }, 60_000);
});
