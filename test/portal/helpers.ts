import { expect } from 'vitest';
import type { TestService } from '../helpers/harness';

/** Portal access as a brand user would have it: a portal user, a login, a session cookie. */

export const PORTAL_PASSWORD = 'a long enough password';

export async function createPortalUser(t: TestService, brandId: string, email: string) {
  const res = await t.request({
    method: 'POST',
    url: `/api/internal/brands/${brandId}/portal-users`,
    admin: true,
    payload: { email, password: PORTAL_PASSWORD },
  });
  expect(res.statusCode, res.body).toBe(201);
}

/** Logs in and answers the `cookie` header value of the session. */
export async function portalLogin(t: TestService, email: string): Promise<string> {
  const res = await t.request({ method: 'POST', url: '/api/client/auth/login', payload: { email, password: PORTAL_PASSWORD } });
  expect(res.statusCode, res.body).toBe(200);
  return String(res.headers['set-cookie']).split(';')[0]!;
}

/** A portal session: GET and write helpers on /api/client/attribution. */
export function portal(t: TestService, cookie: string) {
  const url = (path: string) => `/api/client/attribution${path}`;
  return {
    get: (path: string) => t.request({ method: 'GET', url: url(path), headers: { cookie } }),
    /** Writes from the service's own origin, as the portal's web pages make them. */
    send: (method: 'POST' | 'DELETE', path: string, payload?: unknown) =>
      t.request({ method, url: url(path), headers: { cookie, origin: t.config.publicBaseUrl }, ...(payload ? { payload: payload as object } : {}) }),
  };
}

export type Portal = ReturnType<typeof portal>;
