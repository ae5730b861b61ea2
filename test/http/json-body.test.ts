import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Refusal } from '../../src/refusal';
import { parseJson, parseJsonKeepingBigIntegers } from '../../src/attribution/webhooks/mapping';
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
      expect(refused.json()).toEqual({ error: 'invalid_request' }); // a public attribution endpoint: {"error":"<code>"} only
    }
    expect(good.statusCode).toBe(201);
    const installs = await t.services.db.selectFrom('installs').select('install_id').where('brand_id', '=', brand.json().id).execute();
    expect(installs.map((r) => r.install_id)).toEqual(['good-1']);
    // A backslash followed by the text "u0000" is no NUL character.
    const literal = await install('a\\u0000b');
    expect(literal.statusCode).toBe(201);
    expect(literal.json().install.install_id).toBe('a\\u0000b');
  });

  it('refuses a body that is not valid UTF-8 as malformed JSON, storing nothing', async () => {
    const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));
    const invalid = [
      bytes('{"name":"Bad ', [0xff, 0xfe], '"}'), // bytes no UTF-8 text has
      bytes('{"name":"Overlong ', [0xc0, 0xaf], '"}'), // "/" in two bytes
      bytes('{"name":"Surrogate ', [0xed, 0xa0, 0x80], '"}'), // a UTF-16 surrogate written as UTF-8
      bytes('{"name":"Cut ', [0xe2, 0x82], '"}'), // a character cut short
    ];
    for (const payload of invalid) {
      const res = await t.request({ method: 'POST', url: '/api/internal/brands', admin: true, headers: { 'content-type': 'application/json' }, payload });
      expect(res.statusCode, payload.toString('hex')).toBe(422);
      expect(res.json()).toEqual({ error: 'invalid_request', details: [expect.objectContaining({ path: '', code: 'invalid_json' })] });
    }
    const stored = await t.services.db.selectFrom('brands').select('name').where('name', 'like', '%\uFFFD%').execute();
    expect(stored).toEqual([]);

    // The public endpoints read text/plain the same way (sendBeacon), and answer in their own form.
    const brand = (await t.request({ method: 'POST', url: '/api/internal/brands', admin: true, payload: { name: 'Utf' } })).json();
    for (const contentType of ['application/json', 'text/plain']) {
      const res = await t.request({
        method: 'POST',
        url: '/api/public/attribution/installs',
        headers: { 'content-type': contentType },
        payload: bytes(`{"pixel_key":"${brand.pixel_key}","install_id":"id-`, [0xff], '","platform":"ios"}'),
      });
      expect(res.statusCode, contentType).toBe(422);
      expect(res.json()).toEqual({ error: 'invalid_request' });
    }
    const installs = await t.services.db.selectFrom('installs').select('install_id').where('brand_id', '=', brand.id).execute();
    expect(installs).toEqual([]);
    // Valid multi-byte text is untouched.
    const accented = await postBrandText('{"name":"Café 東京 🎉"}');
    expect(accented.statusCode).toBe(201);
    expect(accented.json().name).toBe('Café 東京 🎉');
  });

  it('answers a body with a Content-Encoding other than identity 415 unsupported_media_type', async () => {
    const brand = (await t.request({ method: 'POST', url: '/api/internal/brands', admin: true, payload: { name: 'Enc' } })).json();
    const install = JSON.stringify({ pixel_key: brand.pixel_key, install_id: 'enc-1', platform: 'ios' });
    for (const encoding of ['gzip', 'br', 'deflate', 'GZIP', 'identity, gzip', 'x-unknown']) {
      const internal = await t.request({
        method: 'POST',
        url: '/api/internal/brands',
        admin: true,
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        payload: '{"name":"Gz"}',
      });
      expect(internal.statusCode, encoding).toBe(415);
      expect(internal.json()).toEqual({ error: 'unsupported_media_type' });
      const pub = await t.request({
        method: 'POST',
        url: '/api/public/attribution/installs',
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        payload: install,
      });
      expect(pub.statusCode, encoding).toBe(415);
      expect(pub.json()).toEqual({ error: 'unsupported_media_type' });
    }
    expect(await t.services.db.selectFrom('brands').select('id').where('name', '=', 'Gz').execute()).toEqual([]);
    // identity is no encoding at all.
    const plain = await t.request({
      method: 'POST',
      url: '/api/public/attribution/installs',
      headers: { 'content-type': 'application/json', 'content-encoding': 'Identity' },
      payload: install,
    });
    expect(plain.statusCode).toBe(201);
  });

  it('billing webhooks read a body that is not UTF-8 as unparseable (422), never as U+FFFD text', () => {
    const bad = Buffer.concat([Buffer.from('{"app_user_id":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    for (const parse of [parseJson, parseJsonKeepingBigIntegers]) {
      expect(() => parse(bad)).toThrow(Refusal);
      expect(() => parse(bad)).toThrow(expect.objectContaining({ status: 422, code: 'unparseable_payload' }));
      expect(parse(Buffer.from('{"name":"Café"}'))).toEqual({ name: 'Café' });
    }
  });
});
