import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrand, createCampaign, postPlacements } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

/** A placement id belongs to one brand; a batch naming another brand's is refused whole. */
let t: TestService;
let acme: { brand: string; campaign: string };
let globex: { brand: string; campaign: string };

beforeAll(async () => {
  t = await startTestService();
  const setUp = async (name: string) => {
    const brand = (await createBrand(t, { name })).id;
    return { brand, campaign: (await createCampaign(t, { brand_id: brand, name: 'Launch' })).id };
  };
  acme = await setUp('Acme');
  globex = await setUp('Globex');
});
afterAll(async () => destroyTestService(t));

const placement = (owner: { brand: string; campaign: string }, id: string) => ({
  id,
  brand_id: owner.brand,
  campaign_id: owner.campaign,
  creator_id: null,
  platform: 'tiktok',
  posted_at: '2026-05-01T10:00:00Z',
  caption: `${id} caption`,
});
const post = (placements: unknown[]) => t.request({ method: 'POST', url: '/api/internal/placements', admin: true, payload: { placements } });

/** The brands ClickHouse holds each placement id under, once the queues settled. */
async function warehouseOwners(ids: string[]): Promise<Record<string, string[]>> {
  await t.settle();
  const rows = await t.services.warehouse.rows<{ placement_id: string; brand_id: string }>(
    'SELECT placement_id, brand_id FROM placements FINAL WHERE placement_id IN {ids:Array(String)} ORDER BY placement_id, brand_id',
    { ids },
  );
  const owners: Record<string, string[]> = {};
  for (const r of rows) owners[r.placement_id] = [...(owners[r.placement_id] ?? []), r.brand_id];
  return owners;
}

describe('POST /api/internal/placements: one brand per placement id', () => {
  it("refuses a batch naming another brand's placement whole, with the row in details", async () => {
    await postPlacements(t, [placement(acme, 'own-1')]);
    const res = await post([placement(globex, 'fresh-1'), placement(globex, 'own-1')]);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({
      error: 'invalid_request',
      details: [{ path: 'placements.1.id', message: expect.stringContaining('another brand') }],
    });
    // Nothing written: the fresh id is not Globex's yet, and own-1 is still Acme's alone.
    expect(await warehouseOwners(['own-1', 'fresh-1'])).toEqual({ 'own-1': [acme.brand] });
    await postPlacements(t, [placement(acme, 'fresh-1')]);
    expect(await warehouseOwners(['fresh-1'])).toEqual({ 'fresh-1': [acme.brand] });
  });

  it('refuses one id under two brands within one request, and accepts a brand replacing its own', async () => {
    const res = await post([placement(acme, 'twice-1'), placement(globex, 'twice-1')]);
    expect(res.statusCode).toBe(422);
    expect(res.json().details).toEqual([{ path: 'placements.1.id', message: expect.stringContaining('another brand') }]);
    expect(await warehouseOwners(['twice-1'])).toEqual({});
    await postPlacements(t, [placement(acme, 'twice-1'), { ...placement(acme, 'twice-1'), caption: 'corrected' }]);
    await postPlacements(t, [{ ...placement(acme, 'twice-1'), caption: 'corrected again' }]);
    expect(await warehouseOwners(['twice-1'])).toEqual({ 'twice-1': [acme.brand] });
  });

  it('gives a fresh id to exactly one of two brands posting it at the same time', async () => {
    for (let round = 0; round < 5; round++) {
      const ids = [`race-${round}-a`, `race-${round}-b`, `race-${round}-c`];
      // Opposite orders: claims taken row by row in request order could deadlock.
      const [a, g] = await Promise.all([post(ids.map((id) => placement(acme, id))), post([...ids].reverse().map((id) => placement(globex, id)))]);
      expect([a.statusCode, g.statusCode].sort()).toEqual([202, 422]);
      const winner = a.statusCode === 202 ? acme.brand : globex.brand;
      expect(await warehouseOwners(ids)).toEqual(Object.fromEntries(ids.map((id) => [id, [winner]])));
    }
  });
});
