import { expect } from 'vitest';
import type { TestService } from './harness';

/** Set-up through the internal endpoints, as an operator would do it. */
export async function createBrand(t: TestService, body: Record<string, unknown> = { name: 'Acme' }) {
  const res = await t.request({ method: 'POST', url: '/api/internal/brands', admin: true, payload: body });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; name: string; pixel_key: string; default_platforms: string[] };
}

export async function createApiKey(t: TestService, brandId: string) {
  const res = await t.request({ method: 'POST', url: `/api/internal/brands/${brandId}/api-keys`, admin: true, payload: {} });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; key: string };
}

export async function createCreator(t: TestService, body: Record<string, unknown>) {
  const res = await t.request({ method: 'POST', url: '/api/internal/creators', admin: true, payload: body });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; name: string };
}

export async function createCampaign(t: TestService, body: Record<string, unknown>) {
  const res = await t.request({ method: 'POST', url: '/api/internal/campaigns', admin: true, payload: body });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; name: string };
}

export async function postPlacements(t: TestService, placements: Record<string, unknown>[]) {
  const res = await t.request({ method: 'POST', url: '/api/internal/placements', admin: true, payload: { placements } });
  expect(res.statusCode).toBe(202);
  return res.json() as { accepted: number };
}

export async function postSnapshots(t: TestService, snapshots: Record<string, unknown>[]) {
  const res = await t.request({ method: 'POST', url: '/api/internal/placement-metrics', admin: true, payload: { snapshots } });
  expect(res.statusCode).toBe(202);
  return res.json() as { accepted: number };
}
