import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPassword } from '../../src/secrets';
import { createBrand, createCampaign, createCreator, postPlacements, postSnapshots } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => destroyTestService(t));

describe('internal set-up endpoints', () => {
  it('creates a brand with a pixel key and the four platforms by default', async () => {
    const brand = await createBrand(t, { name: 'Acme', logo_url: 'https://cdn.example.com/a.png' });
    expect(brand).toMatchObject({ name: 'Acme', logo_url: 'https://cdn.example.com/a.png' });
    expect(typeof brand.id).toBe('string');
    expect(brand.pixel_key).toMatch(/^pk_[A-Za-z0-9_-]{20,}$/);
    expect(brand.default_platforms).toEqual(['instagram', 'tiktok', 'youtube', 'facebook']);
    const custom = await createBrand(t, { name: 'Beta', default_platforms: ['tiktok'] });
    expect(custom.default_platforms).toEqual(['tiktok']);
  });

  it('answers 422 invalid_request with details for invalid bodies and changes nothing', async () => {
    const before = await t.services.db.selectFrom('brands').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    for (const payload of [{}, { name: '' }, { name: 'X', default_platforms: ['myspace'] }, { name: 'X', logo_url: 'not a url' }]) {
      const res = await t.request({ method: 'POST', url: '/api/internal/brands', admin: true, payload });
      expect(res.statusCode).toBe(422);
      expect(res.json().error).toBe('invalid_request');
      expect(res.json().details.length).toBeGreaterThan(0);
    }
    const bad = await t.request({
      method: 'POST',
      url: '/api/internal/brands',
      admin: true,
      headers: { 'content-type': 'application/json' },
      payload: '{"name":',
    });
    expect(bad.statusCode).toBe(422);
    const after = await t.services.db.selectFrom('brands').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });

  it('shows an API key once and stores only its SHA-256', async () => {
    const brand = await createBrand(t);
    const res = await t.request({ method: 'POST', url: `/api/internal/brands/${brand.id}/api-keys`, admin: true, payload: { name: 'ci' } });
    expect(res.statusCode).toBe(201);
    const { id, key } = res.json();
    expect(key).toMatch(/^sk_/);
    const row = await t.services.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.key_hash).toBe(createHash('sha256').update(key).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(key);
    const missing = await t.request({ method: 'POST', url: '/api/internal/brands/nope/api-keys', admin: true, payload: {} });
    expect(missing.statusCode).toBe(404);
  });

  it('creates portal users with scrypt hashes, 12-character passwords and unique emails', async () => {
    const brand = await createBrand(t);
    const url = `/api/internal/brands/${brand.id}/portal-users`;
    const short = await t.request({ method: 'POST', url, admin: true, payload: { email: 'a@b.co', password: 'short' } });
    expect(short.statusCode).toBe(422);
    const res = await t.request({ method: 'POST', url, admin: true, payload: { email: 'Ops@Acme.test', password: 'correct horse battery' } });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ email: 'ops@acme.test', brand_id: brand.id });
    expect(res.json()).not.toHaveProperty('password_hash');
    const row = await t.services.db.selectFrom('portal_users').selectAll().where('email', '=', 'ops@acme.test').executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^scrypt\$/);
    expect(await verifyPassword('correct horse battery', row.password_hash)).toBe(true);
    expect(await verifyPassword('wrong horse battery', row.password_hash)).toBe(false);
    const dup = await t.request({ method: 'POST', url, admin: true, payload: { email: 'ops@acme.test', password: 'another long password' } });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toEqual({ error: 'email_taken' });

    // Concurrent requests for one new email: one 201, the others 409, never a 500.
    const racing = await Promise.all(
      Array.from({ length: 4 }, () => t.request({ method: 'POST', url, admin: true, payload: { email: 'race@acme.test', password: 'a long enough password' } })),
    );
    expect(racing.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409]);
  });

  it('lists brands, creators and campaigns in creation order, paged by cursor', async () => {
    const owner = await createBrand(t);
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await createCampaign(t, { brand_id: owner.id, name: `Paged ${i}` }));
    const names: string[] = [];
    let cursor: string | null = null;
    do {
      const qs: string = `brand_id=${owner.id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await t.request({ method: 'GET', url: `/api/internal/campaigns?${qs}`, admin: true });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.data.length).toBeLessThanOrEqual(2);
      names.push(...body.data.map((c: { name: string }) => c.name));
      expect(body.pagination.has_more).toBe(body.pagination.next_cursor !== null);
      cursor = body.pagination.next_cursor;
    } while (cursor);
    expect(names).toEqual(made.map((c) => c.name));

    // At least two brands and two creators, whatever ran before.
    await createBrand(t);
    for (const name of ['Paged One', 'Paged Two']) await t.request({ method: 'POST', url: '/api/internal/creators', admin: true, payload: { name } });
    for (const list of ['brands', 'creators']) {
      const first = (await t.request({ method: 'GET', url: `/api/internal/${list}?limit=1`, admin: true })).json();
      expect(first.data).toHaveLength(1);
      expect(first.pagination.has_more).toBe(true);
      const second = (await t.request({ method: 'GET', url: `/api/internal/${list}?limit=1&cursor=${first.pagination.next_cursor}`, admin: true })).json();
      expect(second.data).toHaveLength(1);
      expect(second.data[0].id).not.toBe(first.data[0].id);
    }
    for (const bad of ['limit=0', 'limit=101']) {
      const res = await t.request({ method: 'GET', url: `/api/internal/brands?${bad}`, admin: true });
      expect(res.statusCode, bad).toBe(422);
    }
    // A cursor that does not decode is 400 invalid_parameter, as on the other APIs.
    for (const list of ['brands', 'creators', 'campaigns']) {
      const res = await t.request({ method: 'GET', url: `/api/internal/${list}?cursor=garbage`, admin: true });
      expect([res.statusCode, res.json()], list).toMatchObject([400, { error: 'invalid_parameter', param: 'cursor' }]);
    }
  });

  it('creates creators and campaigns', async () => {
    const brand = await createBrand(t);
    const creator = await createCreator(t, {
      name: 'Maya Lopez',
      first_name: 'Maya',
      handles: [{ platform: 'tiktok', handle: '@maya' }],
      followers: 120000,
    });
    expect(creator).toMatchObject({ name: 'Maya Lopez', first_name: 'Maya', followers: 120000, handles: [{ platform: 'tiktok', handle: '@maya' }] });
    const campaign = await createCampaign(t, { brand_id: brand.id, name: 'Spring', start_date: '2026-03-01', visible: false });
    expect(campaign).toMatchObject({ brand_id: brand.id, name: 'Spring', status: 'active', start_date: '2026-03-01', end_date: null, visible: false });
    const orphan = await t.request({ method: 'POST', url: '/api/internal/campaigns', admin: true, payload: { brand_id: 'nope', name: 'X' } });
    expect(orphan.statusCode).toBe(422);
    const backwards = await t.request({
      method: 'POST',
      url: '/api/internal/campaigns',
      admin: true,
      payload: { brand_id: brand.id, name: 'X', start_date: '2026-03-02', end_date: '2026-03-01' },
    });
    expect(backwards.statusCode).toBe(422);
  });

  it('queues placements and snapshots to ClickHouse (202), a later snapshot replacing an earlier one', async () => {
    const brand = await createBrand(t);
    const creator = await createCreator(t, { name: 'Ana' });
    const campaign = await createCampaign(t, { brand_id: brand.id, name: 'Launch' });
    const placement = {
      id: `p-${brand.id}`,
      brand_id: brand.id,
      campaign_id: campaign.id,
      creator_id: creator.id,
      platform: 'instagram',
      url: 'https://instagram.com/p/1',
      caption: 'hello, "world"',
      posted_at: '2026-05-01T12:30:00Z',
    };
    const { creator_id: _, ...withoutCreator } = placement;
    expect(await postPlacements(t, [placement, { ...withoutCreator, id: `q-${brand.id}` }])).toEqual({ accepted: 2 });
    await postSnapshots(t, [
      { placement_id: placement.id, date: '2026-05-01', views: 100, likes: 10, comments: 1 },
      { placement_id: placement.id, date: '2026-05-02', views: 150, likes: 12, comments: 2, shares: 3 },
    ]);
    await postSnapshots(t, [{ placement_id: placement.id, date: '2026-05-02', views: 175, likes: 13, comments: 2, shares: 4 }]);
    await t.settle();

    const placements = await t.services.warehouse.rows<Record<string, unknown>>(
      'SELECT placement_id, creator_id, platform, caption, toString(posted_at) AS posted_at FROM placements FINAL WHERE brand_id = {b:String} ORDER BY placement_id',
      { b: brand.id },
    );
    expect(placements).toEqual([
      { placement_id: placement.id, creator_id: creator.id, platform: 'instagram', caption: 'hello, "world"', posted_at: '2026-05-01 12:30:00.000' },
      { placement_id: `q-${brand.id}`, creator_id: null, platform: 'instagram', caption: 'hello, "world"', posted_at: '2026-05-01 12:30:00.000' },
    ]);
    const snapshots = await t.services.warehouse.rows<Record<string, unknown>>(
      'SELECT toString(date) AS date, views, likes, comments, shares FROM placement_snapshots FINAL WHERE placement_id = {p:String} ORDER BY date',
      { p: placement.id },
    );
    expect(snapshots).toEqual([
      { date: '2026-05-01', views: 100, likes: 10, comments: 1, shares: null },
      { date: '2026-05-02', views: 175, likes: 13, comments: 2, shares: 4 },
    ]);
  });

  it('refuses placements that name an unknown brand, a foreign campaign or an unknown creator', async () => {
    const a = await createBrand(t);
    const b = await createBrand(t);
    const campaignOfB = await createCampaign(t, { brand_id: b.id, name: 'B only' });
    const res = await t.request({
      method: 'POST',
      url: '/api/internal/placements',
      admin: true,
      payload: {
        placements: [
          { id: 'x1', brand_id: a.id, campaign_id: campaignOfB.id, creator_id: null, platform: 'tiktok', posted_at: '2026-05-01T00:00:00Z' },
          { id: 'x2', brand_id: b.id, campaign_id: campaignOfB.id, creator_id: 'ghost', platform: 'tiktok', posted_at: '2026-05-01T00:00:00Z' },
        ],
      },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().details).toEqual([
      { path: 'placements.0.campaign_id', message: 'unknown campaign for this brand' },
      { path: 'placements.1.creator_id', message: 'unknown creator' },
    ]);
    const tooMany = await t.request({
      method: 'POST',
      url: '/api/internal/placement-metrics',
      admin: true,
      payload: { snapshots: Array.from({ length: 10_001 }, () => ({ placement_id: 'p', date: '2026-01-01', views: 1, likes: 1, comments: 1, shares: 1 })) },
    });
    expect(tooMany.statusCode).toBe(422);
  });

  it('refuses times ClickHouse would clamp (before 1970, after 2099): snapshots of different days would collapse into one', async () => {
    const brand = await createBrand(t);
    const campaign = await createCampaign(t, { brand_id: brand.id, name: 'Old' });
    const placement = (posted_at: string) => ({ id: `old-${brand.id}`, brand_id: brand.id, campaign_id: campaign.id, creator_id: null, platform: 'tiktok', posted_at });
    const placements = await t.request({
      method: 'POST',
      url: '/api/internal/placements',
      admin: true,
      payload: { placements: [placement('1969-12-31T23:59:59Z'), placement('2100-01-01T00:00:00Z'), placement('yesterday')] },
    });
    expect(placements.statusCode).toBe(422);
    // One issue per field: a malformed time is not also said to be out of range.
    expect(placements.json().details.map((d: { path: string }) => d.path)).toEqual(['placements.0.posted_at', 'placements.1.posted_at', 'placements.2.posted_at']);
    const snapshot = (date: string) => ({ placement_id: `old-${brand.id}`, date, views: 1, likes: 1, comments: 1, shares: 1 });
    const snapshots = await t.request({
      method: 'POST',
      url: '/api/internal/placement-metrics',
      admin: true,
      payload: { snapshots: [snapshot('1900-01-01'), snapshot('1969-12-31'), snapshot('2150-01-01')] },
    });
    expect(snapshots.statusCode).toBe(422);
    expect(snapshots.json().details.map((d: { path: string }) => d.path)).toEqual(['snapshots.0.date', 'snapshots.1.date', 'snapshots.2.date']);
    // The bounds themselves are kept as sent.
    await postPlacements(t, [placement('1970-01-01T00:00:00Z')]);
    await postSnapshots(t, [snapshot('1970-01-01'), snapshot('2099-12-31')]);
    await t.settle();
    const kept = await t.services.warehouse.rows<{ date: string }>(
      'SELECT toString(date) AS date FROM placement_snapshots FINAL WHERE placement_id = {p:String} ORDER BY date',
      { p: `old-${brand.id}` },
    );
    expect(kept).toEqual([{ date: '1970-01-01' }, { date: '2099-12-31' }]);
  });

  it('accepts a 10,000-placement batch body over 1 MiB', async () => {
    const brand = await createBrand(t);
    const campaign = await createCampaign(t, { brand_id: brand.id, name: 'Bulk' });
    const placements = Array.from({ length: 10_000 }, (_, i) => ({
      id: `bulk-${brand.id}-${i}`,
      brand_id: brand.id,
      campaign_id: campaign.id,
      creator_id: null,
      platform: 'youtube',
      url: `https://youtube.com/watch?v=${i}`,
      thumbnail_url: `https://i.ytimg.com/vi/${i}/hq.jpg`,
      caption: 'x'.repeat(200),
      posted_at: '2026-04-01T00:00:00Z',
    }));
    expect(JSON.stringify({ placements }).length).toBeGreaterThan(1024 * 1024);
    expect(await postPlacements(t, placements)).toEqual({ accepted: 10_000 });
    await t.settle();
    const [row] = await t.services.warehouse.rows<{ n: number }>('SELECT count() AS n FROM placements FINAL WHERE brand_id = {b:String}', { b: brand.id });
    expect(row!.n).toBe(10_000);
  });
});
