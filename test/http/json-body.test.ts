import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: false });
});
afterAll(async () => destroyTestService(t));

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

  it('still refuses malformed JSON with 422 and prototype poisoning with an error', async () => {
    const bad = await t.request({
      method: 'POST',
      url: '/api/internal/brands',
      admin: true,
      headers: { 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toEqual({ error: 'invalid_json' });
    const poisoned = await t.request({
      method: 'POST',
      url: '/api/internal/brands',
      admin: true,
      headers: { 'content-type': 'application/json' },
      payload: '{"name":"x","__proto__":{"admin":true}}',
    });
    expect(poisoned.statusCode).toBe(422);
  });
});
