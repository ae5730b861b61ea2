import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../src/config';
import { creatorFact } from '../src/placements/facts';
import { derivePlacements } from '../src/placements/derive';
import { PLATFORMS } from '../src/platforms';
import type { Services } from '../src/services';
import { adminPost, round } from './helpers';

/**
 * A large brand for the read benches: placements with a daily snapshot each, generated straight
 * into ClickHouse (HTTP would take an hour) and derived by the workers' step, then merged.
 */

export type SeedSize = { placements: number; days: number; creators: number };

export type BenchBrand = { id: string; key: string; visibleCampaigns: string[]; hiddenCampaigns: string[]; creators: string[] };

/** Brand, API key and campaigns through the internal endpoints; creators in bulk. */
export async function setUpBrand(app: FastifyInstance, config: Config, visibleCampaignCount: number): Promise<BenchBrand> {
  const post = adminPost(app, config.adminJwtSecret);
  const brand = await post('/api/internal/brands', { name: 'Bench' });
  const { key } = await post(`/api/internal/brands/${brand.id}/api-keys`, {});
  const campaign = async (i: number, visible: boolean) =>
    (await post('/api/internal/campaigns', { brand_id: brand.id, name: `Campaign ${i}`, visible })).id as string;
  const visibleCampaigns = [];
  for (let i = 0; i < visibleCampaignCount; i++) visibleCampaigns.push(await campaign(i, true));
  const hiddenCampaigns = [await campaign(visibleCampaignCount, false)];
  return { id: brand.id, key, visibleCampaigns, hiddenCampaigns, creators: [] };
}

/**
 * The formulas both stores are generated from. Placement i (p000000 ...) is posted on day
 * i*25 s after `first`, on PLATFORMS[i % 4] (instagram: shares null), in a visible campaign
 * except every 97th (hidden), by creator (7i mod N) except every 50th (none); its snapshot
 * on day d after posting has views base*(d+1)/(d+8) (integer division), likes a tenth,
 * comments a hundredth, shares a three-hundredth, base = 1000 + 7919i mod 50000.
 */
export async function seedPlacements(services: Services, brand: BenchBrand, firstDay: string, size: SeedSize) {
  const { placements: PLACEMENTS, days: DAYS, creators: CREATORS } = size;
  const { warehouse: wh, db } = services;
  const t0 = performance.now();
  const creators = Array.from({ length: CREATORS }, (_, i) => ({
    id: randomUUID(),
    name: `Creator ${String(i).padStart(4, '0')}`,
    handles: [{ platform: PLATFORMS[i % 4]!, handle: `@creator${i}` }],
    followers: 1000 + i,
  }));
  // Straight into ClickHouse, as the creators writer would (the bench bypasses the queues).
  await wh.insert('creators', creators.map(creatorFact));
  for (let i = 0; i < creators.length; i += 1000) {
    await db
      .insertInto('creators')
      .values(creators.slice(i, i + 1000).map((c) => ({ ...c, handles: JSON.stringify(c.handles) })))
      .execute();
  }
  brand.creators.push(...creators.map((c) => c.id));

  const params = {
    brand: brand.id,
    first: firstDay,
    visible: brand.visibleCampaigns,
    hidden: brand.hiddenCampaigns,
    creators: brand.creators,
    platforms: [...PLATFORMS],
  };
  await wh.command(
    `INSERT INTO placements SETTINGS insert_deduplication_token = {token:String}
     SELECT {brand:String}, concat('p', leftPad(toString(number), 6, '0')),
            if(number % 97 = 0, {hidden:Array(String)}[1], {visible:Array(String)}[number % length({visible:Array(String)}) + 1]),
            if(number % 50 = 0, NULL, {creators:Array(String)}[(number * 7) % length({creators:Array(String)}) + 1]),
            {platforms:Array(String)}[number % 4 + 1],
            concat('https://example.com/p/', toString(number)), NULL, concat('Placement ', toString(number)),
            toDateTime64({first:Date}, 3, 'UTC') + toIntervalSecond(number * 25), 1
     FROM numbers(${PLACEMENTS})`,
    { ...params, token: randomUUID() },
  );
  const chunk = PLACEMENTS / 10;
  for (let from = 0; from < PLACEMENTS; from += chunk) {
    await wh.command(
      `INSERT INTO placement_snapshots SETTINGS insert_deduplication_token = {token:String}
       SELECT concat('p', leftPad(toString(i), 6, '0')), toDate({first:Date}) + intDiv(i * 25, 86400) + d,
              intDiv(base * (d + 1), d + 8), intDiv(base * (d + 1), 10 * (d + 8)), intDiv(base * (d + 1), 100 * (d + 8)),
              if(i % 4 = 0, NULL, intDiv(base * (d + 1), 300 * (d + 8))), 1
       FROM (SELECT {from:UInt64} + number % {chunk:UInt64} AS i, intDiv(number, {chunk:UInt64}) AS d,
                    1000 + (i * 7919) % 50000 AS base
             FROM numbers(${chunk * DAYS}))`,
      { first: firstDay, from, chunk, token: randomUUID() },
    );
  }
  const generated = performance.now();
  const ids = Array.from({ length: PLACEMENTS }, (_, i) => `p${String(i).padStart(6, '0')}`);
  await derivePlacements(wh, ids);
  const derived = performance.now();
  // What background merges do with time: measure a settled table.
  await wh.command('OPTIMIZE TABLE placement_activity FINAL');
  await wh.command('OPTIMIZE TABLE placement_totals FINAL');
  const [rows] = await wh.rows<{ snapshots: number; activity_rows: number }>(
    'SELECT (SELECT count() FROM placement_snapshots) AS snapshots, (SELECT count() FROM placement_activity) AS activity_rows',
  );
  return {
    placements: PLACEMENTS,
    ...rows!,
    generate_ms: round(generated - t0, 0),
    derive_ms: round(derived - generated, 0),
    merge_ms: round(performance.now() - derived, 0),
  };
}
