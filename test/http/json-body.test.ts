import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: false });
});
afterAll(async () => destroyTestService(t));

/** Sends `text` as an application/json body to the admin's brand creation, as it is. */
const postBrandText = (text: string) =>
  t.request({ method: 'POST', url: '/api/internal/brands', admin: true, headers: { 'content-type': 'application/json' }, payload: text });

describe('JSON bodies', () => {
  it('treats an empty application/json body as no body', async () => {
    const login = await t.request({
      method: 'POST',
      url: '/api/client/auth/logout',
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    // No session: the route answered (401), the body parser did not refuse the request.
    expect(login.statusCode).toBe(401);
    expect(login.json()).toEqual({ error: 'unauthorized' });
  });

  it('refuses malformed JSON and prototype poisoning as invalid bodies: 422 invalid_request', async () => {
    const bad = await postBrandText('{"name": ');
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toEqual({ error: 'invalid_request', details: [{ path: '', message: 'the body is not valid JSON', code: 'invalid_json' }] });
    const poisoned = await postBrandText('{"name":"x","__proto__":{"admin":true}}');
    expect(poisoned.statusCode).toBe(422);
    expect(poisoned.json()).toMatchObject({ error: 'invalid_request', details: [{ path: '' }] });
  });

  it('refuses a body holding the NUL character with 422, without failing requests batched with it', async () => {
    const brand = await t.request({ method: 'POST', url: '/api/internal/brands', admin: true, payload: { name: 'Nul' } });
    const pixelKey = brand.json().pixel_key as string;
    const install = (installId: string, contentType = 'application/json') =>
      t.request({
        method: 'POST',
        url: '/api/public/attribution/installs',
        headers: { 'content-type': contentType },
        payload: JSON.stringify({ pixel_key: pixelKey, install_id: installId, platform: 'ios' }),
      });
    // Concurrent installs share one INSERT: the bad one must not take the good one down.
    const [bad, badAsText, good] = await Promise.all([install('a\u0000b'), install('c\u0000', 'text/plain'), install('good-1')]);
    for (const refused of [bad, badAsText]) {
      expect(refused.statusCode).toBe(422);
      expect(refused.json()).toEqual({ error: 'invalid_request' }); // a public attribution endpoint: SPEC 7's form
    }
    expect(good.statusCode).toBe(201);
    const installs = await t.services.db.selectFrom('installs').select('install_id').where('brand_id', '=', brand.json().id).execute();
    expect(installs.map((r) => r.install_id)).toEqual(['good-1']);
    // A backslash followed by the text "u0000" is no NUL character.
    const literal = await install('a\\u0000b');
    expect(literal.statusCode).toBe(201);
    expect(literal.json().install.install_id).toBe('a\\u0000b');
  });
});

