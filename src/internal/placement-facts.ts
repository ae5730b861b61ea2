import { z } from 'zod';
import type { Db } from '../db/database';
import { platformSchema } from '../platforms';
import type { FactQueues } from '../queues/queues';
import { chDateTime, nextVersion } from '../warehouse/values';

/**
 * Placements and metric snapshots as operators deliver them, through the internal batch
 * endpoints or `npm run cli -- import`: one validation, one reference check, one way
 * into the queues.
 */

const optionalText = (max: number) => z.string().max(max).nullish();
export const placementSchema = z.object({
  id: z.string().trim().min(1).max(128),
  brand_id: z.string().min(1),
  campaign_id: z.string().min(1),
  // CONTRACT 4 writes `creator_id or null`: an omitted key means no creator too.
  creator_id: z.string().min(1).nullish().transform((v) => v ?? null),
  platform: platformSchema,
  url: optionalText(2000),
  thumbnail_url: optionalText(2000),
  caption: optionalText(10_000),
  posted_at: z.iso.datetime({ offset: true }),
});
export type PlacementInput = z.output<typeof placementSchema>;

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const snapshotSchema = z.object({
  placement_id: z.string().trim().min(1).max(128),
  date: z.iso.date(),
  views: count,
  likes: count,
  comments: count,
  // Some platforms report no shares: null, or the key left out.
  shares: count.nullish().transform((v) => v ?? null),
});
export type SnapshotInput = z.output<typeof snapshotSchema>;

/** A refused item: `index` is its position in the batch. */
export type ReferenceProblem = { index: number; field: string; message: string };

/** Every brand, campaign and creator a batch names must exist, and campaigns belong to the placement's brand. */
export async function placementReferenceProblems(db: Db, placements: PlacementInput[]): Promise<ReferenceProblem[]> {
  const brandIds = [...new Set(placements.map((p) => p.brand_id))];
  const campaignIds = [...new Set(placements.map((p) => p.campaign_id))];
  const creatorIds = [...new Set(placements.flatMap((p) => (p.creator_id ? [p.creator_id] : [])))];
  const [brands, campaigns, creators] = await Promise.all([
    db.selectFrom('brands').select('id').where('id', 'in', brandIds).execute(),
    db.selectFrom('campaigns').select(['id', 'brand_id']).where('id', 'in', campaignIds).execute(),
    creatorIds.length ? db.selectFrom('creators').select('id').where('id', 'in', creatorIds).execute() : Promise.resolve([]),
  ]);
  const brandSet = new Set(brands.map((b) => b.id));
  const campaignBrand = new Map(campaigns.map((c) => [c.id, c.brand_id]));
  const creatorSet = new Set(creators.map((c) => c.id));
  const problems: ReferenceProblem[] = [];
  placements.forEach((p, index) => {
    if (!brandSet.has(p.brand_id)) problems.push({ index, field: 'brand_id', message: 'unknown brand' });
    else if (campaignBrand.get(p.campaign_id) !== p.brand_id)
      problems.push({ index, field: 'campaign_id', message: 'unknown campaign for this brand' });
    if (p.creator_id && !creatorSet.has(p.creator_id)) problems.push({ index, field: 'creator_id', message: 'unknown creator' });
  });
  return problems;
}

/** Queues checked placements for ClickHouse; later in a batch, or in a later batch, replaces earlier. */
export async function queuePlacements(queues: FactQueues, placements: PlacementInput[]): Promise<number> {
  const rows = placements.map((p) => ({
    brand_id: p.brand_id,
    placement_id: p.id,
    campaign_id: p.campaign_id,
    creator_id: p.creator_id,
    platform: p.platform,
    url: p.url ?? null,
    thumbnail_url: p.thumbnail_url ?? null,
    caption: p.caption ?? null,
    posted_at: chDateTime(new Date(p.posted_at)),
    version: nextVersion(),
  }));
  await queues.add('placements', rows);
  return rows.length;
}

/** Queues snapshots; a later one for the same placement and date replaces the earlier one. */
export async function queueSnapshots(queues: FactQueues, snapshots: SnapshotInput[]): Promise<number> {
  await queues.add(
    'placement_metrics',
    snapshots.map((s) => ({ ...s, version: nextVersion() })),
  );
  return snapshots.length;
}
