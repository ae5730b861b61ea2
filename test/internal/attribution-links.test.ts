import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkTotals } from '../../src/attribution/reporting/totals';
import { chDateTime } from '../../src/warehouse/values';
import { answeredLink, createDomain, createLink, type LinkItem } from '../helpers/attribution-fixtures';
import { createBrand, createCreator } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

let t: TestService;
let brand: { id: string };
let otherBrand: { id: string };
let maya: { id: string; name: string };
let shared: { id: string; hostname: string };
beforeAll(async () => {
  t = await startTestService({ workers: false });
  brand = await createBrand(t, { name: 'Acme' });
  otherBrand = await createBrand(t, { name: 'Other' });
  maya = await createCreator(t, { name: 'Maya Lopez', first_name: 'Maya' });
  shared = await createDomain(t, { hostname: 'links.svc-shared.example' });
});
afterAll(async () => destroyTestService(t));

const url = '/api/internal/attribution-links';
const post = (payload: Record<string, unknown>) => t.request({ method: 'POST', url, admin: true, payload });
const patch = (id: number | string, payload: Record<string, unknown>) => t.request({ method: 'PATCH', url: `${url}/${id}`, admin: true, payload });
const base = () => ({
  brand_id: brand.id,
  creator_id: maya.id,
  domain_id: shared.id,
  type: 'web' as 'web' | 'app',
  destination_url: 'https://acme.example/spring',
});

describe('internal attribution links', () => {
  it('needs the admin JWT', async () => {
    expect((await t.request({ method: 'GET', url })).statusCode).toBe(401);
    expect((await t.request({ method: 'POST', url, payload: base() })).statusCode).toBe(401);
    expect((await t.request({ method: 'PATCH', url: `${url}/1`, payload: { active: false } })).statusCode).toBe(401);
  });

  it('creates a web link: id as text, normalised slug, creator, zero totals', async () => {
    const res = await post({ ...base(), slug: ' /Spring-Sale/ ' });
    expect(res.statusCode).toBe(201);
    const link: LinkItem = res.json();
    expect(link).toMatchObject({
      brand_id: brand.id,
      domain_id: shared.id,
      domain: 'links.svc-shared.example',
      slug: 'Spring-Sale',
      type: 'web',
      active: true,
      destination_url: 'https://acme.example/spring',
      ios_url: null,
      android_url: null,
      creator: { id: maya.id, name: 'Maya Lopez' },
      clicks: 0,
      installs: 0,
      conversions: 0,
      revenue: {},
    });
    expect(link.id).toMatch(/^[1-9]\d*$/);
    const got = await t.request({ method: 'GET', url: `${url}/${link.id}`, admin: true });
    expect(got.json()).toEqual(link);
  });

  it("creates the domain's root link with slug '' and multi-segment slugs", async () => {
    const domain = await createDomain(t, { hostname: 'root.example' });
    expect((await createLink(t, { ...base(), domain_id: domain.id, slug: '' })).slug).toBe('');
    const second = await post({ ...base(), domain_id: domain.id, slug: '/' });
    expect(second.statusCode).toBe(409);
    expect((await createLink(t, { ...base(), domain_id: domain.id, slug: '/maya/spring.2026/' })).slug).toBe('maya/spring.2026');
  });

  it('keeps slugs unique per domain regardless of case (409 slug_taken), not across domains', async () => {
    const domain = await createDomain(t, { hostname: 'unique.example' });
    const other = await createDomain(t, { hostname: 'unique2.example' });
    await createLink(t, { ...base(), domain_id: domain.id, slug: 'maya' });
    for (const slug of ['maya', 'MAYA', '/Maya/']) {
      const res = await post({ ...base(), domain_id: domain.id, slug });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({ error: 'slug_taken' });
    }
    expect((await createLink(t, { ...base(), domain_id: other.id, slug: 'maya' })).slug).toBe('maya');
  });

  it("uses shared domains and the brand's own, never another brand's", async () => {
    const own = await createDomain(t, { hostname: 'go.acme.example', brand_id: brand.id });
    const foreign = await createDomain(t, { hostname: 'go.other.example', brand_id: otherBrand.id });
    expect((await createLink(t, { ...base(), domain_id: own.id, slug: 'x' })).domain).toBe('go.acme.example');
    const res = await post({ ...base(), domain_id: foreign.id, slug: 'x' });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({ error: 'invalid_request', details: [{ path: 'domain_id', message: "another brand's custom domain" }] });
  });

  it('answers 422 for unknown brand, creator or domain', async () => {
    const res = await post({ ...base(), brand_id: 'nope', creator_id: 'nope', domain_id: 'nope', slug: 'y' });
    expect(res.statusCode).toBe(422);
    expect(res.json().details.map((d: { path: string }) => d.path)).toEqual(['brand_id', 'creator_id', 'domain_id']);
  });

  it('needs a store URL on app links and http(s) URLs everywhere', async () => {
    const app = { ...base(), type: 'app' as const, slug: 'app' };
    const missing = await post(app);
    expect(missing.statusCode).toBe(422);
    expect(missing.json().details).toEqual([expect.objectContaining({ path: 'ios_url', message: 'an app link needs ios_url or android_url' })]);
    const created = await createLink(t, { ...app, android_url: 'https://play.google.com/store/apps/details?id=com.acme.app' });
    expect(created).toMatchObject({ type: 'app', ios_url: null, android_url: 'https://play.google.com/store/apps/details?id=com.acme.app' });

    for (const bad of [
      { destination_url: 'javascript:alert(1)' },
      { destination_url: 'ftp://acme.example/file' },
      { destination_url: 'not a url' },
      { type: 'app', ios_url: 'itms-apps://apps.apple.com/app/id1' },
      { type: 'sms' },
      { slug: 'has space' },
      { slug: 'a?b' },
      { slug: 'a//b' },
      { slug: 'x'.repeat(101) },
      { slug: undefined },
      { destination_url: undefined },
    ]) {
      const res = await post({ ...base(), slug: 'bad', ...bad });
      expect(res.statusCode, JSON.stringify(bad)).toBe(422);
      expect(res.json().error).toBe('invalid_request');
    }
  });

  it('patches active, destination and store URLs; keeps an app link with a store URL', async () => {
    const link = await createLink(t, { ...base(), slug: 'patch-me', type: 'app', ios_url: 'https://apps.apple.com/app/id123' });
    const off = await patch(link.id, { active: false });
    expect(off.statusCode).toBe(200);
    expect(off.json()).toMatchObject({ id: String(link.id), active: false });
    const on = await patch(link.id, { active: true, destination_url: 'https://acme.example/new', android_url: 'https://play.google.com/store/apps/details?id=a' });
    expect(on.json()).toMatchObject({ active: true, destination_url: 'https://acme.example/new', android_url: 'https://play.google.com/store/apps/details?id=a' });
    expect(Date.parse(on.json().updated_at)).toBeGreaterThanOrEqual(Date.parse(link.updated_at));
    expect((await patch(link.id, { ios_url: null })).json()).toMatchObject({ ios_url: null });

    const lastStore = await patch(link.id, { android_url: null });
    expect(lastStore.statusCode, lastStore.body).toBe(422);
    expect(lastStore.json().details[0].message).toBe('an app link needs ios_url or android_url');
    for (const body of [{}, { destination_url: 'ftp://x.example' }, { active: 'yes' }]) {
      expect((await patch(link.id, body)).statusCode, JSON.stringify(body)).toBe(422);
    }
    for (const id of ['999999999', 'abc', '0', '1e3']) {
      const res = await patch(id, { active: false });
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toEqual({ error: 'not_found' });
    }
  });

  it('lists links filtered by brand and creator, paged by id', async () => {
    const creator = await createCreator(t, { name: 'Lena' });
    const domain = await createDomain(t, { hostname: 'list.example' });
    const mine = [];
    for (const slug of ['a', 'b', 'c']) mine.push(await createLink(t, { ...base(), creator_id: creator.id, domain_id: domain.id, slug }));
    await createLink(t, { ...base(), brand_id: otherBrand.id, creator_id: creator.id, domain_id: domain.id, slug: 'd' });

    const byBoth = await t.request({ method: 'GET', url, admin: true, query: { brand_id: brand.id, creator_id: creator.id } });
    expect(byBoth.statusCode).toBe(200);
    expect(byBoth.json()).toEqual({ data: mine.map(answeredLink), pagination: { next_cursor: null, has_more: false } });

    const first = (await t.request({ method: 'GET', url, admin: true, query: { creator_id: creator.id, limit: '2' } })).json();
    expect(first.data.map((l: LinkItem) => l.slug)).toEqual(['a', 'b']);
    expect(first.pagination.has_more).toBe(true);
    const second = (await t.request({ method: 'GET', url, admin: true, query: { creator_id: creator.id, limit: '2', cursor: first.pagination.next_cursor } })).json();
    expect(second.data.map((l: LinkItem) => [l.slug, l.brand_id])).toEqual([
      ['c', brand.id],
      ['d', otherBrand.id],
    ]);
    expect(second.pagination).toEqual({ next_cursor: null, has_more: false });

    const all = (await t.request({ method: 'GET', url, admin: true })).json();
    expect(all.data.length).toBeLessThanOrEqual(50);
    for (const query of [{ limit: '0' }, { limit: '101' }] as Record<string, string>[]) {
      expect((await t.request({ method: 'GET', url, admin: true, query })).statusCode, JSON.stringify(query)).toBe(422);
    }
    // An integer parameter that is not decimal digits is 400 invalid_parameter on every API.
    expect((await t.request({ method: 'GET', url, admin: true, query: { limit: 'x' } })).statusCode).toBe(400);
    // A cursor that does not decode is paging out of range.
    const bad = await t.request({ method: 'GET', url, admin: true, query: { cursor: 'bad' } });
    expect([bad.statusCode, bad.json()]).toEqual([400, expect.objectContaining({ error: 'invalid_parameter', param: 'cursor' })]);
  });
});

describe('link totals from ClickHouse', () => {
  const nov = '2026-11-20T10:00:00Z';
  const oct = '2026-10-01T10:00:00Z';

  it('counts clicks, deduplicated installs, live non-refund conversions and live revenue per currency', async () => {
    const domain = await createDomain(t, { hostname: 'totals.example' });
    const [a, b, c] = [
      await createLink(t, { ...base(), domain_id: domain.id, slug: 'a' }),
      await createLink(t, { ...base(), domain_id: domain.id, slug: 'b' }),
      await createLink(t, { ...base(), domain_id: domain.id, slug: 'c' }),
    ];
    const { warehouse } = t.services;
    const click = (linkId: number, at: string, brandId = brand.id) => ({
      brand_id: brandId,
      link_id: linkId,
      creator_id: maya.id,
      click_token: `svc_${randomUUID()}`,
      clicked_at: chDateTime(new Date(at)),
    });
    await warehouse.insert('clicks', [click(a.id, nov), click(a.id, nov), click(a.id, nov), click(a.id, oct), click(b.id, nov)]);
    // A row naming link a under another brand is outside link a's brand: never counted.
    await warehouse.insert('clicks', [click(a.id, nov, otherBrand.id)]);

    const install = (id: string, linkId: number | null) => ({
      brand_id: brand.id,
      id,
      install_id: id,
      platform: 'ios',
      attributed: linkId === null ? 0 : 1,
      resolution_method: linkId === null ? 'unattributed' : 'clipboard',
      link_id: linkId,
      occurred_at: chDateTime(new Date(nov)),
      recorded_at: chDateTime(new Date(nov)),
    });
    await warehouse.insert('installs', [install('i1', a.id), install('i2', a.id), install('i3', null)]);
    await warehouse.insert('installs', [install('i1', a.id)]); // a replayed row, not merged yet

    const ledger = (id: string, linkId: number, event_type: string, amount: number, currency = 'USD', at = nov, sandbox = 0) => ({
      brand_id: brand.id,
      id,
      event_type,
      transaction_id: id,
      amount,
      currency,
      source: 'pixel',
      link_id: linkId,
      resolution_method: 'click',
      sandbox,
      occurred_at: chDateTime(new Date(at)),
      recorded_at: chDateTime(new Date(at)),
    });
    await warehouse.insert('ledger', [
      ledger('e1', a.id, 'purchase', 49.99),
      ledger('e2', a.id, 'renewal', 10),
      ledger('e3', a.id, 'refund', -5),
      ledger('e4', a.id, 'purchase', 9.99, 'EUR'),
      ledger('e5', a.id, 'trial', 0),
      ledger('e6', a.id, 'purchase', 100, 'USD', nov, 1), // sandbox
      ledger('e7', a.id, 'purchase', 7, 'USD', oct),
      ledger('e8', b.id, 'purchase', 0.3333),
      ledger('e9', b.id, 'purchase', 0.3333),
    ]);
    await warehouse.insert('ledger', [ledger('e1', a.id, 'purchase', 49.99)]); // replayed

    const res = await t.request({ method: 'GET', url, admin: true, query: { brand_id: brand.id, limit: '100' } });
    const items = new Map<number, LinkItem>(res.json().data.map((l: LinkItem) => [Number(l.id), l]));
    expect(items.get(a.id)).toMatchObject({ clicks: 4, installs: 2, conversions: 5, revenue: { USD: 61.99, EUR: 9.99 } });
    expect(items.get(b.id)).toMatchObject({ clicks: 1, installs: 0, conversions: 2, revenue: { USD: 0.67 } });
    expect(items.get(c.id)).toMatchObject({ clicks: 0, installs: 0, conversions: 0, revenue: {} });
    expect((await t.request({ method: 'GET', url: `${url}/${a.id}`, admin: true })).json()).toMatchObject({ clicks: 4, conversions: 5 });

    // The portal reads the same totals over a date range.
    const november = await linkTotals(warehouse, [a, b, c], { start: new Date('2026-11-01T00:00:00Z'), end: new Date('2026-12-01T00:00:00Z') });
    expect(november.get(a.id)).toEqual({ clicks: 3, bot_clicks: 0, installs: 2, conversions: 4, revenue: { USD: 54.99, EUR: 9.99 } });
    expect(november.get(c.id)).toEqual({ clicks: 0, bot_clicks: 0, installs: 0, conversions: 0, revenue: {} });
    expect(await linkTotals(warehouse, [])).toEqual(new Map());
  });
});
