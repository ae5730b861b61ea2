import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDb } from '../../src/db/database';
import { createDomain, createLink } from '../helpers/attribution-fixtures';
import { createBrand, createCreator } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { addPlacements, addSnapshots, api, brandWithKey, createCampaign } from '../data-api/helpers';
import { createPortalUser, portal, portalLogin } from '../portal/helpers';

/**
 * Answers of reads over facts are cached per brand and question (src/reads/pipeline.ts):
 * served again without ClickHouse, read again once that brand's facts land (the writers'
 * notifications) or a record they name changes, and never across brands.
 */

let t: TestService;
let key: string;
let brandId: string;
let campaignId: string;
const posted = '2026-03-02T10:00:00Z';

/** ClickHouse reads made by `fn` (the warehouse itself, counted; never replaced). */
async function reads<T>(fn: () => Promise<T>): Promise<{ result: T; reads: number }> {
  const spy = vi.spyOn(t.services.warehouse, 'rows');
  try {
    const result = await fn();
    return { result, reads: spy.mock.calls.length };
  } finally {
    spy.mockRestore();
  }
}

const summary = async (k = key) => {
  const res = await api(t, k, '/metrics/summary');
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { data: { posts: number; views: number }; meta: { generated_at: string } };
};

/** Waits until the API process has the writers' notification that the brand's facts landed. */
async function untilLanded(area: 'placements' | 'attribution', brand: string, before: string) {
  await expect.poll(() => t.services.factChanges.version(area, brand)).not.toBe(before);
}

beforeAll(async () => {
  t = await startTestService({ workers: true });
  const acme = await brandWithKey(t, { name: 'Acme' });
  key = acme.key;
  brandId = acme.brand.id;
  campaignId = (await createCampaign(t, { brand_id: brandId, name: 'Spring' })).id;
  await addPlacements(t, brandId, [{ id: 'p1', campaign_id: campaignId, creator_id: null, platform: 'tiktok', posted_at: posted }]);
  await addSnapshots(t, 'p1', [['2026-03-02', 100, 10, 1, 2]]);
  await t.settle();
});
afterAll(async () => destroyTestService(t));

describe('Data API answers', () => {
  it('are read once, then served from the cache with a fresh generated_at', async () => {
    const first = await reads(() => summary());
    expect(first.result.data).toMatchObject({ posts: 1, views: 100 });
    const again = await reads(() => summary());
    expect(again.reads).toBe(0);
    expect(again.result.data).toEqual(first.result.data);
    expect(Date.parse(again.result.meta.generated_at)).toBeGreaterThanOrEqual(Date.parse(first.result.meta.generated_at));
  });

  it('are read again once new facts of the brand land', async () => {
    await summary();
    const before = t.services.factChanges.version('placements', brandId);
    await addPlacements(t, brandId, [{ id: 'p2', campaign_id: campaignId, creator_id: null, platform: 'tiktok', posted_at: posted }]);
    await addSnapshots(t, 'p2', [['2026-03-02', 50, 5, 0, 0]]);
    await t.settle();
    await untilLanded('placements', brandId, before);
    expect((await summary()).data).toMatchObject({ posts: 2, views: 150 });
  });

  it('follow a change of the records they name at once (a campaign added through this process)', async () => {
    const brandAnswer = async () => (await api(t, key, '/brand')).json() as { data: { campaigns: { name: string }[] } };
    expect((await brandAnswer()).data.campaigns.map((c) => c.name)).toEqual(['Spring']);
    await createCampaign(t, { brand_id: brandId, name: 'Summer' });
    expect((await brandAnswer()).data.campaigns.map((c) => c.name)).toEqual(['Spring', 'Summer']);
  });

  it('never keep an answer made from brand records read before a change (a campaign added while they were read)', async () => {
    const { brand, key: k } = await brandWithKey(t, { name: 'Racing' });
    await createCampaign(t, { brand_id: brand.id, name: 'Spring' });
    const names = async () => ((await api(t, k, '/brand')).json() as { data: { campaigns: { name: string }[] } }).data.campaigns.map((c) => c.name);
    expect(await names()).toEqual(['Spring']);
    // The next read of the brand's campaigns is held once Postgres answered it, until released.
    let reached!: () => void;
    let release!: () => void;
    const atGate = new Promise<void>((r) => (reached = r));
    const gate = new Promise<void>((r) => (release = r));
    const db = t.services.db;
    const selectFrom = db.selectFrom.bind(db);
    const held = (builder: object): object =>
      new Proxy(builder, {
        get(target, prop) {
          const value = Reflect.get(target, prop) as unknown;
          if (typeof value !== 'function') return value;
          if (prop === 'execute') {
            return async (...args: unknown[]) => {
              const rows = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
              reached();
              await gate;
              return rows;
            };
          }
          return (...args: unknown[]) => {
            const next = (value as (...a: unknown[]) => unknown).apply(target, args);
            return next && typeof next === 'object' && 'execute' in next ? held(next) : next;
          };
        },
      });
    const spy = vi.spyOn(db, 'selectFrom').mockImplementation(((from: never) => {
      const builder = selectFrom(from);
      return from === 'campaigns' ? held(builder) : builder;
    }) as never);
    try {
      // Any record change: the next request reads the brand again, and is held with Spring only.
      t.services.recordChanges.changed('records', 'every brand');
      const racing = names();
      await atGate;
      spy.mockRestore();
      const counts = () => t.services.recordChanges.version('records', brand.id).split('.').map(Number);
      const [, everyBefore = 0, ownBefore = 0] = counts();
      await createCampaign(t, { brand_id: brand.id, name: 'Summer' });
      // This process's own count of the write and its notification for the brand (all another process would see), before the held request goes on.
      await expect.poll(() => counts()[1]! > everyBefore && counts()[2]! > ownBefore).toBe(true);
      release();
      await racing;
    } finally {
      spy.mockRestore();
      release();
    }
    expect(await names()).toEqual(['Spring', 'Summer']);
  });

  it('stay cached through writes that change no record they name (a portal login, a refused write)', async () => {
    await summary();
    await createPortalUser(t, brandId, 'reader@acme.test');
    await portalLogin(t, 'reader@acme.test');
    const refused = await t.request({ method: 'POST', url: '/api/internal/campaigns', admin: true, payload: { brand_id: brandId } });
    expect(refused.statusCode).toBe(422);
    expect((await reads(() => summary())).reads).toBe(0);
  });

  it('are per brand: another brand with the same question reads its own', async () => {
    const other = await brandWithKey(t, { name: 'Other' });
    const res = await api(t, other.key, '/metrics/summary');
    expect(res.json().data).toMatchObject({ posts: 0, views: 0 });
    expect((await summary()).data).toMatchObject({ posts: 2 });
  });

  it("stay cached when another brand's records change, and are read again when their own do", async () => {
    const neighbour = await brandWithKey(t, { name: 'Neighbour' });
    await summary();
    // Written by another process (its own pool): only the notification reaches this one.
    const elsewhere = createDb(t.config.databaseUrl, 1);
    const campaign = (brand: string, id: string) => elsewhere.insertInto('campaigns').values({ id, brand_id: brand, name: id, status: 'active' }).execute();
    try {
      await campaign(neighbour.brand.id, 'neighbour-spring');
      await t.services.recordChanges.caughtUp();
      expect((await reads(() => summary())).reads).toBe(0);
      await campaign(brandId, 'own-autumn');
      await t.services.recordChanges.caughtUp();
      expect((await reads(() => summary())).reads).toBeGreaterThan(0);
    } finally {
      await elsewhere.destroy();
    }
  });

  it('share one read among concurrent requests of one question', async () => {
    const before = t.services.factChanges.version('placements', brandId);
    await addSnapshots(t, 'p1', [['2026-03-03', 120, 10, 1, 2]]);
    await t.settle();
    await untilLanded('placements', brandId, before);
    const { result, reads: n } = await reads(() => Promise.all(Array.from({ length: 8 }, () => summary())));
    expect(result.map((r) => r.data.views)).toEqual(Array(8).fill(170));
    expect(n).toBe(2); // the summary and the brand's first posting day (period all), once each
  });

  it('keep parameter errors uncached: a bad request still answers 400', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await api(t, key, '/metrics/summary', { period: 'week' });
      expect(res.statusCode).toBe(400);
    }
  });
});

describe('portal answers', () => {
  it('follow clicks once the writer has them, and links created meanwhile at once', async () => {
    const brand = await createBrand(t, { name: 'Linked' });
    await createPortalUser(t, brand.id, 'owner@linked.test');
    const session = portal(t, await portalLogin(t, 'owner@linked.test'));
    const creator = await createCreator(t, { name: 'Maya Lopez', first_name: 'Maya' });
    const domain = await createDomain(t, { hostname: 'maya.cache.test', brand_id: brand.id });
    const overview = async () => (await session.get('/overview')).json() as { clicks: number };
    const links = async () => (await session.get('/links')).json() as { data: { slug: string; clicks: number }[] };
    expect(await overview()).toMatchObject({ clicks: 0 });
    expect((await links()).data).toEqual([]);

    await createLink(t, { brand_id: brand.id, creator_id: creator.id, domain_id: domain.id, slug: 'spring', type: 'web', destination_url: 'https://acme.example/' });
    expect((await links()).data.map((l) => l.slug)).toEqual(['spring']);

    const before = t.services.factChanges.version('attribution', brand.id);
    const click = await t.request({
      method: 'POST',
      url: '/api/public/attribution/clicks',
      payload: { domain: 'maya.cache.test', slug: 'spring', user_agent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X)' },
    });
    expect(click.statusCode).toBe(200);
    await t.settle();
    await untilLanded('attribution', brand.id, before);
    expect(await overview()).toMatchObject({ clicks: 1 });
    expect((await links()).data).toMatchObject([{ slug: 'spring', clicks: 1 }]);
  });
});

describe('without its notifications', () => {
  it('reads every request through while the fact feed is down, and caches again once it is back', async () => {
    await summary();
    await t.services.factChanges.close();
    try {
      expect(t.services.factChanges.live).toBe(false);
      expect((await reads(() => summary())).reads).toBeGreaterThan(0);
      expect((await reads(() => summary())).reads).toBeGreaterThan(0);
    } finally {
      await t.services.factChanges.start();
    }
    await summary();
    expect((await reads(() => summary())).reads).toBe(0);
  });
});

describe('READ_CACHE_MB=0', () => {
  it('turns the cache off: every request reads ClickHouse', async () => {
    const off = await startTestService({ env: { READ_CACHE_MB: '0' } });
    try {
      const { brand, key: offKey } = await brandWithKey(off, { name: 'Uncached' });
      expect(brand.id).toBeTruthy();
      const spy = vi.spyOn(off.services.warehouse, 'rows');
      for (let i = 0; i < 3; i++) expect((await api(off, offKey, '/metrics/summary')).statusCode).toBe(200);
      expect(spy.mock.calls.length).toBeGreaterThanOrEqual(3);
      spy.mockRestore();
    } finally {
      await destroyTestService(off);
    }
  });
});
