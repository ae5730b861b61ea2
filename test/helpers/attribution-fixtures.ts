import { expect } from 'vitest';
import type { TestService } from './harness';

/**
 * Attribution set-up through the internal endpoints (CONTRACT 4 and 8), as an operator
 * would do it. Each helper expects 201 and answers the created object.
 */

export type DomainItem = {
  id: string;
  hostname: string;
  shared: boolean;
  brand_id: string | null;
  verification: { status: 'pending' | 'verified'; checked_at: string | null };
  dns: { type: string; name: string; value: string }[];
  certificate: { status: string };
  created_at: string;
};

export type Money = Record<string, number>;

export type LinkItem = {
  /** Postgres bigserial: a number, as in the install link summary of SPEC 2.10. */
  id: number;
  brand_id: string;
  domain_id: string;
  domain: string;
  slug: string;
  type: 'web' | 'app';
  active: boolean;
  destination_url: string;
  ios_url: string | null;
  android_url: string | null;
  creator: { id: string; name: string };
  clicks: number;
  installs: number;
  conversions: number;
  revenue: Money;
  created_at: string;
  updated_at: string;
};

export type CodeItem = {
  id: string;
  brand_id: string;
  label: string;
  active: boolean;
  creator: { id: string; name: string };
  credited_count: number;
  conversions: number;
  revenue: Money;
  created_at: string;
  updated_at: string;
};

export async function createDomain(t: TestService, body: { hostname: string; brand_id?: string | null }): Promise<DomainItem> {
  const res = await t.request({ method: 'POST', url: '/api/internal/attribution-domains', admin: true, payload: body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** `slug` defaults to '' (the root link), `type` to web, `destination_url` to an example page. */
export async function createLink(
  t: TestService,
  body: {
    brand_id: string;
    creator_id: string;
    domain_id: string;
    slug?: string;
    type?: 'web' | 'app';
    destination_url?: string;
    ios_url?: string | null;
    android_url?: string | null;
  },
): Promise<LinkItem> {
  const payload = { slug: '', type: 'web', destination_url: 'https://example.com/landing', ...body };
  const res = await t.request({ method: 'POST', url: '/api/internal/attribution-links', admin: true, payload });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** Without `label` the service generates one from the creator's first name. */
export async function createCode(t: TestService, body: { brand_id: string; creator_id: string; label?: string }): Promise<CodeItem> {
  const res = await t.request({ method: 'POST', url: '/api/internal/attribution-codes', admin: true, payload: body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}
