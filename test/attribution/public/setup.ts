import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { createCode, createDomain, createLink } from '../../helpers/attribution-fixtures';
import { createBrand, createCreator } from '../../helpers/fixtures';
import type { TestService } from '../../helpers/harness';

/**
 * A brand ready for attribution: its own vanity domain with a web root link, a web
 * slug link and an app link, a creator and a creator code, all made through the
 * internal endpoints.
 */
export async function attributionBrand(t: TestService, name = 'Acme') {
  const brand = await createBrand(t, { name });
  const creator = await createCreator(t, { name: 'Maya Lopez', first_name: 'Maya' });
  const hostname = `${name.toLowerCase()}-${randomBytes(4).toString('hex')}.link`;
  const domain = await createDomain(t, { hostname, brand_id: brand.id });
  // Whose a new link of this brand is: spread into createLink's body.
  const owner = { brand_id: brand.id, creator_id: creator.id, domain_id: domain.id };
  const root = await createLink(t, { ...owner, slug: '', destination_url: 'https://acme.example/home' });
  const web = await createLink(t, { ...owner, slug: 'maya', destination_url: 'https://acme.example/shop?ref=maya' });
  const app = await createLink(t, {
    ...owner,
    slug: 'app',
    type: 'app',
    destination_url: 'https://acme.example/app',
    ios_url: 'https://apps.apple.com/app/id123456789',
    android_url: 'https://play.google.com/store/apps/details?id=com.acme.app&hl=en',
  });
  const code = await createCode(t, { ...owner, label: `MAYA${randomBytes(2).toString('hex').toUpperCase()}` });
  return { brand, creator, domain, hostname, owner, root, web, app, code };
}

export type AttributionBrand = Awaited<ReturnType<typeof attributionBrand>>;

/** What an install credited to the brand's app link answers as its link, code and creator. */
export const appLinkCredit = (b: AttributionBrand) => ({
  link: { id: b.app.id, domain: b.hostname, slug: 'app' },
  code: null,
  creator: { id: b.creator.id, name: 'Maya Lopez' },
});

const PATH = '/api/public/attribution';

export async function postPublic(t: TestService, endpoint: 'clicks' | 'installs' | 'events', payload: unknown, opts: { headers?: Record<string, string>; remoteAddress?: string } = {}) {
  return t.request({ method: 'POST', url: `${PATH}/${endpoint}`, payload: payload as Record<string, unknown>, ...opts });
}

/** Clicks a link and answers the click token. */
export async function click(t: TestService, body: Record<string, unknown>): Promise<string> {
  const res = await postPublic(t, 'clicks', body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().click_token;
}

export const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148';
export const IPAD = 'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148';
export const IPOD = 'Mozilla/5.0 (iPod touch; CPU iPhone OS 12_5 like Mac OS X) AppleWebKit/605.1.15';
export const ANDROID = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/124.0 Mobile Safari/537.36';
export const DESKTOP = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36';

export const uniqueId = (prefix = 'id') => `${prefix}-${randomBytes(6).toString('hex')}`;

/** Every ClickHouse row of `table` matching `where`, read raw (no FINAL: a duplicate would show). */
export async function warehouseRows<T = Record<string, unknown>>(t: TestService, table: string, where: string, params: Record<string, unknown>) {
  return t.services.warehouse.rows<T>(`SELECT * FROM ${table} WHERE ${where}`, params);
}
