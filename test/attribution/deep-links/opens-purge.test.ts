import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LinkOpens, OPEN_CREDIT_WINDOW_MS, OPEN_KEEP_MS } from '../../../src/attribution/links/opens';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { type AttributionBrand, attributionBrand, uniqueId } from '../public/setup';

/** Opens are kept past the 7-day credit window (plus a margin for late webhooks), then purged in bounded statements. */

let t: TestService;
let acme: AttributionBrand;
beforeAll(async () => {
  t = await startTestService();
  acme = await attributionBrand(t, 'Acme');
});
afterAll(async () => destroyTestService(t));

describe('link opens purge', () => {
  it('deletes opens older than the credit window and its margin, a batch a statement, and keeps the rest', async () => {
    expect(OPEN_KEEP_MS).toBeGreaterThan(OPEN_CREDIT_WINDOW_MS);
    const ages = { fresh: 1, pastWindow: 10, old1: 15, old2: 16, old3: 30 };
    const ids: Record<string, string> = {};
    for (const [name, days] of Object.entries(ages)) {
      ids[name] = uniqueId(`purge-${name}`);
      const res = await t.request({
        method: 'POST',
        url: '/api/public/attribution/opens',
        payload: { pixel_key: acme.brand.pixel_key, platform: 'ios', install_id: ids[name], url: `https://${acme.hostname}/app` },
      });
      expect(res.statusCode, res.body).toBe(200);
      await t.services.db
        .updateTable('link_opens')
        .set({ opened_at: sql`now() - make_interval(days => ${days})` })
        .where('install_id', '=', ids[name])
        .execute();
    }
    const kept = async () =>
      (await t.services.db.selectFrom('link_opens').select('install_id').where('install_id', 'in', Object.values(ids)).execute()).map((r) => r.install_id).sort();

    // Two rows a statement: several statements until none is left (the service's own purge may take some first).
    const purged = await new LinkOpens(t.services.db).purgeExpired(2);
    expect(purged).toBeLessThanOrEqual(3);
    expect(await kept()).toEqual([ids.fresh, ids.pastWindow].sort());
    // Nothing older is left anywhere.
    const stale = await t.services.db
      .selectFrom('link_opens')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('opened_at', '<', new Date(Date.now() - OPEN_KEEP_MS))
      .executeTakeFirstOrThrow();
    expect(Number(stale.n)).toBe(0);
  });
});
