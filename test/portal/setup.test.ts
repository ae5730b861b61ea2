import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrand } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { createPortalUser, type Portal, portal, portalLogin } from './helpers';

let t: TestService;
let a: Portal;
let brand: { id: string; pixel_key: string };

beforeAll(async () => {
  t = await startTestService({ workers: false });
  brand = await createBrand(t, { name: 'Acme' });
  await createPortalUser(t, brand.id, 'a@acme.test');
  a = portal(t, await portalLogin(t, 'a@acme.test'));
});
afterAll(async () => destroyTestService(t));

describe('GET /setup', () => {
  it('answers the pixel key, the loader snippet, the SDK docs and the public endpoints', async () => {
    const res = await a.get('/setup');
    expect(res.statusCode, res.body).toBe(200);
    const base = t.config.publicBaseUrl;
    const reactNative = [
      "import AsyncStorage from '@react-native-async-storage/async-storage';",
      "import { Platform } from 'react-native';",
      "import { configure, trackInstall } from '@svc/react-native';",
      '',
      'configure({',
      `  pixelKey: "${brand.pixel_key}",`,
      `  endpoint: "${base}",`,
      "  platform: Platform.OS === 'ios' ? 'ios' : 'android',",
      '  storage: AsyncStorage,',
      '});',
      'trackInstall();',
    ].join('\n');
    expect(res.json()).toEqual({
      pixel_key: brand.pixel_key,
      snippet: [
        '<script>',
        '  window.svc = window.svc || function () { (svc.q = svc.q || []).push(arguments); };',
        `  svc('init', "${brand.pixel_key}");`,
        '</script>',
        `<script async src="${base}/pixel.js?v=1"></script>`,
      ].join('\n'),
      pixel_url: `${base}/pixel.js?v=1`,
      sdk_docs_url: `${base}/docs/sdk`,
      // The React Native one stays under its first name for existing clients.
      sdk_snippet: reactNative,
      sdk_snippets: {
        react_native: reactNative,
        swift: [
          'import SvcAttribution',
          '',
          '// Once at launch: App.init or application(_:didFinishLaunchingWithOptions:)',
          'Svc.configure(',
          `    pixelKey: "${brand.pixel_key}",`,
          `    endpoint: URL(string: "${base}")`,
          ')',
          'Task { await Svc.trackInstall() }',
        ].join('\n'),
      },
      install_endpoint: `${base}/api/public/attribution/installs`,
      events_endpoint: `${base}/api/public/attribution/events`,
    });
  });

  it('links the SDK documentation page, which is served without a session', async () => {
    const url = new URL((await a.get('/setup')).json().sdk_docs_url);
    const page = await t.request({ method: 'GET', url: url.pathname });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('<h1 id="react-native-svcreact-native">@svc/react-native</h1>');
  });

  it('is the only portal answer holding the pixel key', async () => {
    for (const path of ['/overview', '/links', '/codes', '/events', '/domains', '/connections']) {
      const res = await a.get(path);
      expect(res.statusCode, path).toBe(200);
      expect(res.body, path).not.toContain(brand.pixel_key);
    }
  });
});

describe('GET /pixel.js', () => {
  it('serves the pixel as cacheable JavaScript with an ETag, and 304 when it is current', async () => {
    const res = await t.request({ method: 'GET', url: '/pixel.js?v=1' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toMatch(/public, max-age=\d+/);
    expect(res.body).toContain("svc.version = VERSION");
    const etag = String(res.headers.etag);
    expect(etag).toMatch(/^"[0-9a-f]+"$/);
    const again = await t.request({ method: 'GET', url: '/pixel.js?v=1', headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect((await t.request({ method: 'GET', url: '/pixel.js?v=2' })).statusCode).toBe(404);
  });
});

describe('GET /api/client/openapi.json', () => {
  it('publishes the portal operations as OpenAPI 3.1, without a session', async () => {
    const res = await t.request({ method: 'GET', url: '/api/client/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.portalSession).toEqual({ type: 'apiKey', in: 'cookie', name: 'svc_session' });
    for (const path of ['overview', 'links', 'codes', 'events', 'setup', 'domains', 'domains/{id}', 'domains/{id}/check']) {
      expect(doc.paths, path).toHaveProperty([`/api/client/attribution/${path}`]);
    }
    expect(doc.paths['/api/client/auth/login'].post.security).toEqual([]);
    const apps = doc.paths['/api/client/attribution/apps'];
    expect(Object.keys(apps).sort()).toEqual(['get', 'put']);
    expect(Object.keys(apps.put.requestBody.content['application/json'].schema.properties)).toEqual(['ios', 'android']);
    const events = doc.paths['/api/client/attribution/events'].get;
    expect(events.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['period', 'start_date', 'end_date', 'event_type', 'creator_id', 'sandbox', 'limit', 'cursor']),
    );
    const item = events.responses['200'].content['application/json'].schema.properties.data.items;
    expect(Object.keys(item.properties)).toContain('resolution_method');
    expect(doc.paths['/api/client/attribution/domains/{id}'].delete.responses).toHaveProperty('409');

    const connections = doc.paths['/api/client/attribution/connections'];
    const connection = doc.paths['/api/client/attribution/connections/{id}'];
    expect(Object.keys(connections).sort()).toEqual(['get', 'post']);
    expect(Object.keys(connection).sort()).toEqual(['delete', 'patch']);
    const created = connections.post.responses['201'].content['application/json'].schema;
    expect(Object.keys(created.properties)).toEqual(expect.arrayContaining(['webhook_url', 'status', 'signing_secret_set', 'signing_secret_warning']));
    expect(Object.keys(created.properties)).not.toContain('signing_secret');
    expect(connections.post.requestBody.content['application/json'].schema.properties.provider.enum).toEqual(['revenuecat', 'adapty', 'stripe', 'shopify', 'apple']);
    const listed = connections.get.responses['200'].content['application/json'].schema;
    expect(Object.keys(listed.properties)).toEqual(['data', 'setup_cards']);
    const card = listed.properties.setup_cards.items;
    expect(Object.keys(card.properties.signing_secret.properties)).toEqual(['used', 'required', 'what', 'without']);
    expect(card.properties.settings.items.properties.type.enum).toEqual(['text', 'boolean', 'number', 'choice', 'secret', 'map']);
    expect(Object.keys(connection.patch.requestBody.content['application/json'].schema.properties).sort()).toEqual(['settings', 'signing_secret']);
    expect(connection.patch.parameters.map((p: { name: string; in: string }) => [p.name, p.in])).toEqual([['id', 'path']]);
    expect(connections.post.responses).toHaveProperty('409');
    expect(connection.delete.responses).toHaveProperty('204');
  });
});
