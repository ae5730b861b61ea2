import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { DomainItem as Domain } from '../../src/attribution/domains/domains';
import type { CodeItem as Code, LinkItem as Link } from '../../src/attribution/reporting/lists';
import type { Money } from '../../src/attribution/reporting/money';
import { chDateTime } from '../../src/warehouse/values';
import type { TestService } from './harness';

/**
 * Attribution set-up through the internal endpoints (docs/api.md), as an operator
 * would do it. Each helper expects 201 and answers the created object.
 */

/** An answer's JSON of a type the service builds: its dates arrive as ISO strings. */
type AsJson<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] extends object ? AsJson<T[K]> : T[K] };

export type DomainItem = AsJson<Domain>;
export type LinkItem = AsJson<Link>;
export type CodeItem = AsJson<Code>;
/**
 * A link as created, its `id` as the integer that installs, ledger rows, Postgres and
 * ClickHouse carry; the API answers it as a string, which createLink checks.
 */
export type LinkFixture = Omit<LinkItem, 'id'> & { id: number };

/** A created link as the API answers it (its id as text), to compare with answers. */
export const answeredLink = (link: LinkFixture): LinkItem => ({ ...link, id: String(link.id) });
export type { Money };

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
): Promise<LinkFixture> {
  const payload = { slug: '', type: 'web', destination_url: 'https://example.com/landing', ...body };
  const res = await t.request({ method: 'POST', url: '/api/internal/attribution-links', admin: true, payload });
  expect(res.statusCode, res.body).toBe(201);
  const link: LinkItem = res.json();
  expect(link.id).toMatch(/^[1-9]\d*$/);
  return { ...link, id: Number(link.id) };
}

/** Without `label` the service generates one from the creator's first name. */
export async function createCode(t: TestService, body: { brand_id: string; creator_id: string; label?: string }): Promise<CodeItem> {
  const res = await t.request({ method: 'POST', url: '/api/internal/attribution-codes', admin: true, payload: body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/**
 * Clicks on a web link at a past instant, written straight into ClickHouse: the public
 * endpoint stamps the present, and reads over past days need older clicks.
 */
export async function insertPastClicks(
  t: TestService,
  link: { brandId: string; linkId: number; creatorId: string; domain: string },
  at: Date,
  count: number,
) {
  const rows = Array.from({ length: count }, () => ({
    brand_id: link.brandId,
    link_id: link.linkId,
    creator_id: link.creatorId,
    click_token: `svc_${randomBytes(12).toString('base64url')}`,
    clicked_at: chDateTime(at),
    domain: link.domain,
    link_type: 'web',
  }));
  await t.services.warehouse.insert('clicks', rows);
}

/** A sandbox purchase of 500 USD in the ledger (what a provider's test delivery records): never counted. */
export async function insertSandboxPurchase(t: TestService, brandId: string, occurredAt: Date) {
  await t.services.warehouse.insert('ledger', [
    {
      brand_id: brandId,
      id: 'sandbox-row',
      event_type: 'purchase',
      transaction_id: 'sandbox-1',
      amount: '500',
      currency: 'USD',
      source: 'stripe',
      resolution_method: 'unattributed',
      sandbox: 1,
      occurred_at: chDateTime(occurredAt),
      recorded_at: chDateTime(new Date()),
    },
  ]);
}
