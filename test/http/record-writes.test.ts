import type { InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrand, createCreator } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { createPortalUser, portalLogin } from '../portal/helpers';

/**
 * Every statement that changes the records cached answers name (migrations/0011) drops them in this
 * process before it resolves, without waiting for the feed: the connection that wrote it hears its
 * own notice (src/reads/changes.ts, followWrites). No route has to say it writes records.
 */
let t: TestService;
let brandId: string;
let creatorId: string;
let cookie: string;

beforeAll(async () => {
  t = await startTestService({ workers: false });
  brandId = (await createBrand(t, { name: 'Writes' })).id;
  creatorId = (await createCreator(t, { name: 'Maya Lopez', first_name: 'Maya' })).id;
  await createPortalUser(t, brandId, 'owner@writes.test');
  cookie = await portalLogin(t, 'owner@writes.test');
});
afterAll(async () => destroyTestService(t));

/**
 * Postgres holds a listener's notices while it runs a statement: the feed's own connection sleeps
 * (up to 10 s) until `release` cancels the sleep.
 */
async function holdRecordNotices() {
  const changes = t.services.recordChanges as unknown as { feed: { client: { query(q: string): Promise<{ rows: { pid: number }[] }> } } };
  const { client } = changes.feed;
  const [{ pid }] = (await client.query('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];
  let holding = true;
  const sleeping = client.query('SELECT pg_sleep(10)').then(
    () => {},
    () => {}, // cancelled
  );
  void sleeping.then(() => {
    holding = false;
  });
  return {
    holding: () => holding,
    release: async () => {
      await sql`SELECT pg_cancel_backend(${pid})`.execute(t.services.db);
      await sleeping;
    },
  };
}

const recordsVersion = () => t.services.recordChanges.version('records', brandId);

/**
 * Sends `req` while notices are held; answers the JSON and whether the cached answers were dropped
 * meanwhile. An answer that came after the hold ended proves nothing (the notice may have dropped them): it fails.
 */
async function send(req: InjectOptions & { admin?: boolean }) {
  const hold = await holdRecordNotices();
  const before = recordsVersion();
  const res = await t.request(req);
  const dropped = recordsVersion() !== before;
  expect(hold.holding(), `${req.method} ${req.url} was answered after the notices were let through`).toBe(true);
  await hold.release();
  expect(res.statusCode, res.body).toBeLessThan(300);
  return { body: res.body ? res.json() : null, dropped };
}

const internal = (method: 'POST' | 'PATCH' | 'DELETE', path: string, payload?: object) =>
  send({ method, url: `/api/internal${path}`, admin: true, ...(payload ? { payload } : {}) });
const portal = (method: 'POST' | 'DELETE', path: string, payload?: object) =>
  send({ method, url: `/api/client/attribution${path}`, headers: { cookie, origin: t.config.publicBaseUrl }, ...(payload ? { payload } : {}) });

/** The routes that write records cached answers name (each sent below). */
const RECORD_WRITES = [
  'POST /api/internal/brands',
  'POST /api/internal/campaigns',
  'POST /api/internal/attribution-domains',
  'POST /api/internal/attribution-domains/:id/check',
  'DELETE /api/internal/attribution-domains/:id',
  'POST /api/internal/attribution-links',
  'PATCH /api/internal/attribution-links/:id',
  'POST /api/internal/attribution-codes',
  'PATCH /api/internal/attribution-codes/:id',
  'DELETE /api/internal/attribution-codes/:id',
  'POST /api/client/attribution/domains',
  'POST /api/client/attribution/domains/:id/check',
  'DELETE /api/client/attribution/domains/:id',
];
describe('record writes', () => {
  it('are any statement that changes a record, through a route or not: committed, it drops them before it resolves', async () => {
    const hold = await holdRecordNotices();
    try {
      const before = recordsVersion();
      // Straight through the database, as a route added tomorrow would write.
      await t.services.db.insertInto('campaigns').values({ id: 'direct-write', brand_id: brandId, name: 'Direct', status: 'active' }).execute();
      const inserted = recordsVersion();
      expect(inserted).not.toBe(before);
      // In a transaction: not before its COMMIT (a read meanwhile still sees the old row), at once after it.
      await t.services.db.transaction().execute(async (trx) => {
        await trx.updateTable('campaigns').set({ name: 'Renamed' }).where('id', '=', 'direct-write').execute();
        expect(recordsVersion()).toBe(inserted);
      });
      const renamed = recordsVersion();
      expect(renamed).not.toBe(inserted);
      // Rolled back: nothing changed, nothing dropped.
      const rolledBack = t.services.db.transaction().execute(async (trx) => {
        await trx.updateTable('campaigns').set({ name: 'Never' }).where('id', '=', 'direct-write').execute();
        throw new Error('roll back');
      });
      await expect(rolledBack).rejects.toThrow('roll back');
      // Another table (an API key's): no answer names it.
      await t.services.db.insertInto('api_keys').values({ id: 'direct-write-key', brand_id: brandId, name: 'direct', key_hash: 'direct-write-hash', key_prefix: 'direct' }).execute();
      expect(recordsVersion()).toBe(renamed);
      expect(hold.holding(), 'the writes were answered after the notices were let through').toBe(true);
    } finally {
      await hold.release();
    }
  });

  it('through the internal API drop the cached answers at once', async () => {
    const dropped: Record<string, boolean> = {};
    const brand = await internal('POST', '/brands', { name: 'Another' });
    dropped['POST /api/internal/brands'] = brand.dropped;
    dropped['POST /api/internal/campaigns'] = (await internal('POST', '/campaigns', { brand_id: brandId, name: 'Spring' })).dropped;
    const domain = await internal('POST', '/attribution-domains', { hostname: 'go.writes.test', brand_id: brandId });
    dropped['POST /api/internal/attribution-domains'] = domain.dropped;
    const link = await internal('POST', '/attribution-links', {
      brand_id: brandId,
      creator_id: creatorId,
      domain_id: domain.body.id,
      slug: 'maya',
      type: 'web',
      destination_url: 'https://writes.example/',
    });
    dropped['POST /api/internal/attribution-links'] = link.dropped;
    dropped['PATCH /api/internal/attribution-links/:id'] = (await internal('PATCH', `/attribution-links/${link.body.id}`, { active: false })).dropped;
    const code = await internal('POST', '/attribution-codes', { brand_id: brandId, creator_id: creatorId, label: 'MAYA10' });
    dropped['POST /api/internal/attribution-codes'] = code.dropped;
    dropped['PATCH /api/internal/attribution-codes/:id'] = (await internal('PATCH', `/attribution-codes/${code.body.id}`, { active: false })).dropped;
    dropped['DELETE /api/internal/attribution-codes/:id'] = (await internal('DELETE', `/attribution-codes/${code.body.id}`)).dropped;
    const spare = await internal('POST', '/attribution-domains', { hostname: 'spare.writes.test', brand_id: brandId });
    dropped['POST /api/internal/attribution-domains/:id/check'] = (await internal('POST', `/attribution-domains/${spare.body.id}/check`)).dropped;
    dropped['DELETE /api/internal/attribution-domains/:id'] = (await internal('DELETE', `/attribution-domains/${spare.body.id}`)).dropped;
    expect(Object.entries(dropped).filter(([, d]) => !d)).toEqual([]);
    expect(Object.keys(dropped).sort()).toEqual(RECORD_WRITES.filter((r) => r.includes('/api/internal/')).sort());
  });

  it("through the portal's domains drop them at once", async () => {
    const domain = await portal('POST', '/domains', { hostname: 'portal.writes.test' });
    const check = await portal('POST', `/domains/${domain.body.id}/check`);
    const removed = await portal('DELETE', `/domains/${domain.body.id}`);
    expect(RECORD_WRITES.filter((r) => r.includes('/api/client/'))).toHaveLength(3);
    expect([domain.dropped, check.dropped, removed.dropped]).toEqual([true, true, true]);
  });

  it('that change no record (an API key, a refused write, a read) keep them', async () => {
    expect((await internal('POST', `/brands/${brandId}/api-keys`, { name: 'reader' })).dropped).toBe(false);
    // A new creator names nothing cached until a link or code does (migrations/0011); its name reaches answers as a fact.
    expect((await internal('POST', '/creators', { name: 'Sam Lee', first_name: 'Sam' })).dropped).toBe(false);
    await t.services.recordChanges.caughtUp(); // the notices of the writes above are in
    const before = recordsVersion();
    const refused = await t.request({ method: 'POST', url: '/api/internal/campaigns', admin: true, payload: { brand_id: brandId } });
    expect(refused.statusCode).toBe(422);
    await t.request({ method: 'GET', url: '/api/internal/brands', admin: true });
    expect(recordsVersion()).toBe(before);
  });
});
