import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: false });
});
afterAll(async () => destroyTestService(t));

describe('GET /docs/sdk', () => {
  it('serves the SDK guide that /setup links, without a session, on PUBLIC_BASE_URL', async () => {
    const res = await t.request({ method: 'GET', url: '/docs/sdk' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
    const base = t.config.publicBaseUrl;
    expect(res.body).toContain(`${base}/api/public/attribution/installs`);
    expect(res.body).toContain(`${base}/api/public/attribution/events`);
    for (const key of ['svc_install_id', 'svc_install_reported', 'appAccountToken']) expect(res.body).toContain(key);
    expect(res.body).not.toContain('{base_url}');
  });
});
