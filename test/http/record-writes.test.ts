import type { InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrand, createCreator } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { createPortalUser, portalLogin } from '../portal/helpers';

/**
 * Every route that writes the records cached answers name (migrations/0010, 0011) drops them in this
 * process as it answers, without waiting for Postgres's notice (Route.writesRecords).
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

/** The routes that write records cached answers name: each must carry writesRecords (checked above by sending it). */
const RECORD_WRITES = [
  'POST /api/internal/brands',
  'POST /api/internal/creators',
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
/** Writes of anything else: keys, logins, sessions, connections, facts (queued), a code's count. */
const OTHER_WRITES = [
  'POST /api/internal/brands/:id/api-keys',
  'POST /api/internal/brands/:id/portal-users',
  'POST /api/internal/placements',
  'POST /api/internal/placement-metrics',
  'DELETE /api/internal/attribution-connections/:id',
  'POST /api/client/auth/login',
  'POST /api/client/auth/logout',
  'POST /api/client/attribution/connections',
  'PATCH /api/client/attribution/connections/:id',
  'DELETE /api/client/attribution/connections/:id',
  'POST /api/public/attribution/clicks',
  'POST /api/public/attribution/installs',
  'POST /api/public/attribution/events',
  'POST /api/webhooks/attribution/:provider/:token',
];

/** Every method and path the app serves that may write, read from Fastify's route tree. */
function writeRoutes(): string[] {
  const prefixes: string[] = [];
  const routes: string[] = [];
  for (const line of t.app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (.*) \(([A-Z, ]+)\)$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    prefixes.length = depth;
    const path = (prefixes[depth - 1] ?? '') + m[2];
    prefixes.push(path);
    for (const method of m[3]!.split(', ')) if (!['GET', 'HEAD', 'OPTIONS'].includes(method)) routes.push(`${method} ${path}`);
  }
  return routes;
}

describe('record writes', () => {
  it('are every route that writes, less those listed as writing something else: a new write route must be placed', () => {
    const routes = writeRoutes();
    // The queue dashboard's API (bull-board, behind the admin token) writes only queues.
    const ours = routes.filter((r) => !r.split(' ')[1]!.startsWith('/admin/queues'));
    expect(routes.length - ours.length).toBeGreaterThan(10);
    expect(ours.filter((r) => !RECORD_WRITES.includes(r) && !OTHER_WRITES.includes(r))).toEqual([]);
    expect([...RECORD_WRITES, ...OTHER_WRITES].filter((r) => !ours.includes(r))).toEqual([]);
  });

  it('through the internal API drop the cached answers at once', async () => {
    const dropped: Record<string, boolean> = {};
    const brand = await internal('POST', '/brands', { name: 'Another' });
    dropped['POST /api/internal/brands'] = brand.dropped;
    dropped['POST /api/internal/creators'] = (await internal('POST', '/creators', { name: 'Sam Lee', first_name: 'Sam' })).dropped;
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
    await t.services.recordChanges.caughtUp(); // the notices of the writes above are in
    const before = recordsVersion();
    const refused = await t.request({ method: 'POST', url: '/api/internal/campaigns', admin: true, payload: { brand_id: brandId } });
    expect(refused.statusCode).toBe(422);
    await t.request({ method: 'GET', url: '/api/internal/brands', admin: true });
    expect(recordsVersion()).toBe(before);
  });
});
