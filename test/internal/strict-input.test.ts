import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDomain, createLink } from '../helpers/attribution-fixtures';
import { createBrand, createCampaign, createCreator } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

/**
 * What the internal API stores is strict (docs/api.md): every URL is an absolute http(s) URL
 * without spaces or control characters, a link slug has no empty, `.` or `..` segment, and an
 * integer query parameter is decimal digits only.
 */
let t: TestService;
let brand: { id: string };
let creator: { id: string };
let domain: { id: string };
let campaign: { id: string };
beforeAll(async () => {
  t = await startTestService({ workers: false });
  brand = await createBrand(t, { name: 'Strict' });
  creator = await createCreator(t, { name: 'Maya Lopez', first_name: 'Maya' });
  domain = await createDomain(t, { hostname: 'go.strict-input.example', brand_id: brand.id });
  campaign = await createCampaign(t, { brand_id: brand.id, name: 'C' });
});
afterAll(async () => destroyTestService(t));

const post = (path: string, payload: Record<string, unknown>) => t.request({ method: 'POST', url: `/api/internal${path}`, admin: true, payload });
const BAD_URLS = [
  'javascript:alert(1)',
  'JavaScript://acme.example/%0Aalert(1)',
  'data:text/html,<script>alert(1)</script>',
  'https://acme.example/a\r\nSet-Cookie: x=1',
  'https://acme.example/\n',
  'https://acme.example/a\tb',
  'https://acme.example/a b',
  ' https://acme.example/',
  'https://acme.example/\u0085',
  '//acme.example/x',
  'http:acme.example',
  'https:///x',
  'ftp://acme.example/file',
  '/relative/path',
];
const link = (body: Record<string, unknown>) => ({
  brand_id: brand.id,
  creator_id: creator.id,
  domain_id: domain.id,
  slug: 'x',
  type: 'web',
  destination_url: 'https://acme.example/',
  ...body,
});

function expectRefused(res: { statusCode: number; json(): unknown }, what: string) {
  expect(res.statusCode, what).toBe(422);
  expect(res.json(), what).toMatchObject({ error: 'invalid_request', details: expect.any(Array) });
}

describe('URLs the internal API stores', () => {
  it('refuses a logo_url that is not an absolute http(s) URL without control characters; nothing stored', async () => {
    for (const logo_url of BAD_URLS) expectRefused(await post('/brands', { name: 'Logo', logo_url }), JSON.stringify(logo_url));
    const brands = await t.services.db.selectFrom('brands').select('id').where('name', '=', 'Logo').execute();
    expect(brands).toEqual([]);
    const ok = await post('/brands', { name: 'Logo ok', logo_url: 'HTTPS://cdn.example.com/logo.png?v=2#x' });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().logo_url).toBe('HTTPS://cdn.example.com/logo.png?v=2#x');
  });

  it("refuses such a link destination, App Store or Google Play URL, on creation and on change", async () => {
    let n = 0;
    for (const bad of BAD_URLS) {
      for (const field of ['destination_url', 'ios_url', 'android_url']) {
        const body = link({ slug: `bad-${n++}`, type: 'app', ios_url: 'https://apps.apple.com/app/id1', [field]: bad });
        expectRefused(await post('/attribution-links', body), `${field} ${JSON.stringify(bad)}`);
      }
    }
    const created = await createLink(t, { ...link({ slug: 'patched' }), type: 'web' });
    for (const bad of BAD_URLS) {
      for (const field of ['destination_url', 'ios_url', 'android_url']) {
        const res = await t.request({ method: 'PATCH', url: `/api/internal/attribution-links/${created.id}`, admin: true, payload: { [field]: bad } });
        expectRefused(res, `PATCH ${field} ${JSON.stringify(bad)}`);
      }
    }
    const stored = await t.services.db.selectFrom('links').select(['destination_url', 'ios_url', 'android_url']).where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(stored).toEqual({ destination_url: 'https://acme.example/', ios_url: null, android_url: null });
  });

  it('refuses such a placement url or thumbnail_url', async () => {
    const placement = { id: 'strict-1', brand_id: brand.id, campaign_id: campaign.id, creator_id: null, platform: 'tiktok', posted_at: '2026-01-01T00:00:00Z' };
    for (const bad of ['javascript:alert(1)', 'https://x.example/\r\n', 'data:image/png;base64,AAAA']) {
      for (const field of ['url', 'thumbnail_url']) {
        expectRefused(await post('/placements', { placements: [{ ...placement, [field]: bad }] }), `${field} ${JSON.stringify(bad)}`);
      }
    }
    const ok = await post('/placements', { placements: [{ ...placement, url: 'https://tiktok.com/@maya/1', thumbnail_url: null }] });
    expect(ok.statusCode).toBe(202);
  });
});

describe('link slugs', () => {
  it('refuses an empty, . or .. segment: browsers would resolve it away', async () => {
    for (const slug of ['a/../b', '..', '.', './x', 'x/.', 'a/./b', '../x', 'a//b', 'a/b/..']) {
      expectRefused(await post('/attribution-links', link({ slug })), slug);
    }
    // Dots inside a segment are letters like any other.
    for (const slug of ['v1.2', 'x..y/...', '.well/b.']) {
      expect((await createLink(t, { ...link({ slug }), type: 'web' })).slug, slug).toBe(slug);
    }
  });
});

describe('integer query parameters', () => {
  it('are decimal digits only on the internal lists: anything else is 400 invalid_parameter', async () => {
    for (const list of ['brands', 'creators', 'campaigns', 'attribution-links', 'attribution-codes', 'attribution-domains', 'attribution-connections']) {
      for (const limit of ['0x10', '1e2', '+5', ' 5', '5.0', '']) {
        const res = await t.request({ method: 'GET', url: `/api/internal/${list}`, admin: true, query: { limit } });
        expect(res.statusCode, `${list} limit=${JSON.stringify(limit)}`).toBe(400);
        expect(res.json()).toMatchObject({ error: 'invalid_parameter', param: 'limit' });
      }
      const ok = await t.request({ method: 'GET', url: `/api/internal/${list}`, admin: true, query: { limit: '05' } });
      expect(ok.statusCode, list).toBe(200);
    }
  });
});
