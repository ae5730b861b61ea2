import { sql } from 'kysely';
import { z } from 'zod';
import type { Db } from '../db/database';
import type { Queues } from '../facts';
import { platformSchema } from '../platforms';
import { isRecordableInstant } from '../recordable-time';
import { storedUrl } from '../storable-text';
import { placementFact, snapshotFact } from './facts';

/**
 * Placements and metric snapshots as operators deliver them, through the internal batch
 * endpoints or `npm run cli -- import`: one validation, one reference check, one way
 * into the queues.
 */

const optionalText = (max: number) => z.string().max(max).nullish();
/** Times ClickHouse stores as sent: 1970 to 2099 (outside, a Date or DateTime is clamped, and snapshots of different days would collapse into one). */
const inRecordableYears = <S extends z.ZodString | z.ZodISODate | z.ZodISODateTime>(schema: S) =>
  // A malformed value has its own issue from the format check: no second one here.
  schema.refine((v) => Number.isNaN(Date.parse(v)) || isRecordableInstant(Date.parse(v)), { message: 'must be from 1970 to 2099' });
export const placementSchema = z.object({
  id: z.string().trim().min(1).max(128),
  brand_id: z.string().min(1),
  campaign_id: z.string().min(1),
  // `creator_id` is an id or null: an omitted key means no creator too.
  creator_id: z.string().min(1).nullish().transform((v) => v ?? null),
  platform: platformSchema,
  url: storedUrl(2000).nullish(),
  thumbnail_url: storedUrl(2000).nullish(),
  caption: optionalText(10_000),
  posted_at: inRecordableYears(z.iso.datetime({ offset: true })),
});
export type PlacementInput = z.output<typeof placementSchema>;

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const snapshotSchema = z.object({
  placement_id: z.string().trim().min(1).max(128),
  date: inRecordableYears(z.iso.date()),
  views: count,
  likes: count,
  comments: count,
  // Some platforms report no shares: null, or the key left out.
  shares: count.nullish().transform((v) => v ?? null),
});
export type SnapshotInput = z.output<typeof snapshotSchema>;

/** A refused item: `index` is its position in the batch. */
export type ReferenceProblem = { index: number; field: string; message: string };

/**
 * Every brand, campaign and creator a batch names must exist, campaigns belong to the
 * placement's brand, and a placement id belongs to one brand (docs/hardening.md#a-placement-id-belongs-to-one-brand): not another's
 * already, nor named under two brands in the batch.
 */
export async function placementReferenceProblems(db: Db, placements: PlacementInput[]): Promise<ReferenceProblem[]> {
  const brandIds = [...new Set(placements.map((p) => p.brand_id))];
  const campaignIds = [...new Set(placements.map((p) => p.campaign_id))];
  const creatorIds = [...new Set(placements.flatMap((p) => (p.creator_id ? [p.creator_id] : [])))];
  const [brands, campaigns, creators, owners] = await Promise.all([
    db.selectFrom('brands').select('id').where('id', 'in', brandIds).execute(),
    db.selectFrom('campaigns').select(['id', 'brand_id']).where('id', 'in', campaignIds).execute(),
    creatorIds.length ? db.selectFrom('creators').select('id').where('id', 'in', creatorIds).execute() : Promise.resolve([]),
    ownerProblems(db, placements),
  ]);
  const brandSet = new Set(brands.map((b) => b.id));
  const campaignBrand = new Map(campaigns.map((c) => [c.id, c.brand_id]));
  const creatorSet = new Set(creators.map((c) => c.id));
  const problems: ReferenceProblem[] = [];
  const firstBrand = new Map<string, string>();
  placements.forEach((p, index) => {
    if (!brandSet.has(p.brand_id)) problems.push({ index, field: 'brand_id', message: 'unknown brand' });
    else if (campaignBrand.get(p.campaign_id) !== p.brand_id)
      problems.push({ index, field: 'campaign_id', message: 'unknown campaign for this brand' });
    if (p.creator_id && !creatorSet.has(p.creator_id)) problems.push({ index, field: 'creator_id', message: 'unknown creator' });
    if ((firstBrand.get(p.id) ?? p.brand_id) !== p.brand_id)
      problems.push({ index, field: 'id', message: 'placement id named under another brand earlier in this request' });
    else firstBrand.set(p.id, p.brand_id);
  });
  return [...problems, ...owners].sort((a, b) => a.index - b.index);
}

/** Rows whose placement id is already another brand's. */
async function ownerProblems(db: Db, placements: PlacementInput[]): Promise<ReferenceProblem[]> {
  const ids = [...new Set(placements.map((p) => p.id))];
  const { rows } = await sql<{ placement_id: string; brand_id: string }>`
    SELECT placement_id, brand_id FROM placement_owners WHERE placement_id = ANY(${ids}::text[])`.execute(db);
  const owner = new Map(rows.map((r) => [r.placement_id, r.brand_id]));
  return placements.flatMap((p, index) =>
    owner.has(p.id) && owner.get(p.id) !== p.brand_id ? [{ index, field: 'id', message: 'placement id belongs to another brand' }] : [],
  );
}

/** A batch refused whole because one of its ids is another brand's; nothing was claimed or queued. */
export class PlacementOwnerConflict extends Error {
  constructor(readonly problems: ReferenceProblem[]) {
    super(`placement ids of another brand: ${problems.map((p) => `item ${p.index}`).join(', ')}`);
  }
}

/**
 * Claims each placement id for its brand in Postgres, all or nothing: the primary key of
 * placement_owners makes a concurrent second claim wait and see the first (a ClickHouse look-up
 * could not), and ids are claimed in one sorted order, so batches never deadlock.
 */
async function claimPlacementIds(db: Db, placements: PlacementInput[]): Promise<void> {
  const claims = new Map<string, string>();
  for (const p of placements) if (!claims.has(p.id)) claims.set(p.id, p.brand_id);
  const ids = [...claims.keys()].sort();
  await db.transaction().execute(async (trx) => {
    await sql`INSERT INTO placement_owners (placement_id, brand_id)
      SELECT * FROM unnest(${ids}::text[], ${ids.map((id) => claims.get(id)!)}::text[])
      ON CONFLICT (placement_id) DO NOTHING`.execute(trx);
    const found = await ownerProblems(trx, placements);
    if (found.length) throw new PlacementOwnerConflict(found); // rolls the claims back
  });
}

/**
 * Claims checked placements' ids for their brands (PlacementOwnerConflict when another brand
 * took one meanwhile), then queues them for ClickHouse; later in a batch, or in a later batch,
 * replaces earlier. A claim whose queueing then fails stays: it names the right brand.
 */
export async function queuePlacements(deps: { db: Db; queues: Queues }, placements: PlacementInput[]): Promise<number> {
  await claimPlacementIds(deps.db, placements);
  const rows = placements.map(placementFact);
  await deps.queues.add('placements', rows);
  return rows.length;
}

/** Queues snapshots; a later one for the same placement and date replaces the earlier one. */
export async function queueSnapshots(queues: Queues, snapshots: SnapshotInput[]): Promise<number> {
  await queues.add('placement_metrics', snapshots.map(snapshotFact));
  return snapshots.length;
}
