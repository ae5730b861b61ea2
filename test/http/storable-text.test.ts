import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, brandWithKey } from '../data-api/helpers';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { createPortalUser, portal, portalLogin } from '../portal/helpers';

/** Text a store cannot hold (NUL, a lone UTF-16 surrogate) is refused, never a 500; paging stays in range. */
let t: TestService;
let acme: Awaited<ReturnType<typeof brandWithKey>>;
let cookie: string;

beforeAll(async () => {
  t = await startTestService({ workers: false });
  acme = await brandWithKey(t, { name: 'Acme' });
  await createPortalUser(t, acme.brand.id, 'owner@acme.test');
  cookie = await portalLogin(t, 'owner@acme.test');
});
afterAll(async () => destroyTestService(t));

/** A JSON body as written, escapes included (JSON.stringify would turn a lone surrogate into the same escape). */
const rawJson = (method: 'POST' | 'PATCH', url: string, payload: string, extra: Record<string, unknown> = {}) =>
  t.request({ method, url, headers: { 'content-type': 'application/json' }, payload, ...extra });
const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('bodies', () => {
  it('refuses a lone surrogate anywhere in a body with 422, without failing requests batched with it', async () => {
    for (const payload of ['{"name":"x\\ud800"}', '{"name":"\\udc00x"}', '{"name":"ok","x\\ud83d":1}', '{"name":"a\\ude00\\ud83d"}']) {
      const res = await rawJson('POST', '/api/internal/brands', payload, { admin: true });
      expect(res.statusCode, payload).toBe(422);
      expect(res.json()).toMatchObject({ error: 'invalid_request', details: [{ path: '' }] });
    }
    const install = (installId: string) =>
      rawJson('POST', '/api/public/attribution/installs', `{"pixel_key":"${acme.brand.pixel_key}","install_id":"${installId}","platform":"ios"}`);
    const [bad, good] = await Promise.all([install('dev\\ud800ice'), install('device-1')]);
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toEqual({ error: 'invalid_request' });
    expect(good.statusCode).toBe(201);
    const event = await rawJson('POST', '/api/public/attribution/events', `{"pixel_key":"${acme.brand.pixel_key}","transaction_id":"\\udfff","amount":1}`);
    expect(event.statusCode).toBe(422);
    expect(event.json()).toEqual({ error: 'invalid_request' });
    const rows = await t.services.db.selectFrom('installs').select('install_id').where('brand_id', '=', acme.brand.id).execute();
    expect(rows.map((r) => r.install_id)).toEqual(['device-1']);
  });

  it('keeps well-formed text, surrogate pairs (emoji) included', async () => {
    const res = await rawJson('POST', '/api/internal/brands', '{"name":"Smile \\ud83d\\ude00"}', { admin: true });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().name).toBe('Smile 😀');
  });
});

describe('query parameters', () => {
  it('answers 400 invalid_parameter naming the parameter in the Data API', async () => {
    for (const [path, param] of [
      ['/posts?platform=tiktok%00', 'platform'],
      ['/creators?campaign_id=a%00b', 'campaign_id'],
      ['/brand?period=%00', 'period'],
      ['/posts.csv?sort=%ED%A0%80', 'sort'],
      ['/metrics/summary?anything=%00', 'anything'],
    ]) {
      const res = await t.request({ method: 'GET', url: `/api/v1${path}`, headers: { authorization: `Bearer ${acme.key}` } });
      expect(res.statusCode, path).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_parameter', param });
    }
  });

  it('answers 400 invalid_parameter in portal and internal lists', async () => {
    const p = portal(t, cookie);
    for (const path of ['/events?creator_id=%00', '/links?creator_id=x%00', '/codes?period=%00']) {
      const res = await p.get(path);
      expect(res.statusCode, path).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_parameter' });
    }
    const res = await t.request({ method: 'GET', url: '/api/internal/attribution-links?brand_id=%00', admin: true });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_parameter', param: 'brand_id' });
  });
});

describe('path ids', () => {
  it('answers 404 for a path id holding NUL (UTF-8 percent-encoding cannot carry a lone surrogate)', async () => {
    for (const [method, url] of [
      ['GET', '/api/internal/attribution-links/%00'],
      ['GET', '/api/internal/attribution-codes/a%00'],
      ['GET', '/api/internal/creators/%00'],
      ['POST', '/api/internal/brands/%00/api-keys'],
      ['DELETE', '/api/internal/attribution-domains/%00'],
      ['GET', '/api/internal/attribution-domains/x%00'],
    ] as const) {
      const res = await t.request({ method, url, admin: true, ...(method === 'POST' ? { payload: {} } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json()).toEqual({ error: 'not_found' });
    }
    const p = portal(t, cookie);
    for (const path of ['/domains/%00/check', '/connections/%00']) {
      const res = await p.send(path.endsWith('check') ? 'POST' : 'DELETE', path);
      expect(res.statusCode, path).toBe(404);
    }
    const hook = await t.request({ method: 'POST', url: '/api/webhooks/attribution/stripe/svw_%00', payload: '{}', headers: { 'content-type': 'application/json' } });
    expect(hook.statusCode).toBe(404);
  });
});

describe('paging out of range', () => {
  it('answers 400 invalid_parameter for page over 1,000,000 on /creators', async () => {
    for (const page of ['1000001', '99999999999']) {
      const res = await api(t, acme.key, '/creators', { page });
      expect(res.statusCode, page).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_parameter', param: 'page' });
    }
    expect((await api(t, acme.key, '/creators', { page: '1000000' })).statusCode).toBe(200);
  });

  it('answers 400 invalid_parameter for /posts cursors that do not decode', async () => {
    for (const cursor of ['!!!', 'x'.repeat(5000), cursorOf(['recent', 1, 'a\u0000']), cursorOf(['recent', 1, '\ud800']), cursorOf(['recent', 1e300, 'a'])]) {
      const res = await api(t, acme.key, '/posts', { cursor });
      expect(res.statusCode, cursor.slice(0, 40)).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_parameter', param: 'cursor' });
    }
  });

  it('answers 400 invalid_parameter for portal /events cursors that do not decode or are out of range', async () => {
    const p = portal(t, cookie);
    for (const cursor of ['!!!', cursorOf([1e15, 'x']), cursorOf([-1e15, 'x']), cursorOf([Date.now(), 'a\u0000']), cursorOf([Date.now(), '\udc00']), cursorOf(['x', 'y'])]) {
      const res = await p.get(`/events?cursor=${cursor}`);
      expect(res.statusCode, cursor).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_parameter', param: 'cursor' });
    }
    expect((await p.get(`/events?cursor=${cursorOf([Date.now(), 'x'])}`)).statusCode).toBe(200);
  });
});
