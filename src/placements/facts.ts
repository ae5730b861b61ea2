import type { Selectable } from 'kysely';
import type { CreatorsTable } from '../db/schema';
import { chDateTime, nextVersion } from '../warehouse/values';

/** A placement as operators deliver it (./intake.ts validates it). */
export type PlacementDelivery = {
  id: string;
  brand_id: string;
  campaign_id: string;
  creator_id: string | null;
  platform: string;
  url?: string | null;
  thumbnail_url?: string | null;
  caption?: string | null;
  posted_at: string;
};

/** A metric snapshot as operators deliver it: cumulative totals at the end of `date`. */
export type SnapshotDelivery = {
  placement_id: string;
  date: string;
  views: number;
  likes: number;
  comments: number;
  shares: number | null;
};

/** The ClickHouse `placements` row; a later version of the same placement replaces it. */
export function placementFact(p: PlacementDelivery) {
  return {
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
  };
}

/** The ClickHouse `placement_snapshots` row; a later one for the same placement and date replaces it. */
export function snapshotFact(s: SnapshotDelivery) {
  return {
    placement_id: s.placement_id,
    date: s.date,
    views: s.views,
    likes: s.likes,
    comments: s.comments,
    shares: s.shares,
    version: nextVersion(),
  };
}

export type CreatorRow = Selectable<CreatorsTable>;

/**
 * The ClickHouse `creators` row, which /creators and /posts join for names, handles and
 * followers (creators are shared by brands and live in Postgres); its id is the Postgres id.
 */
export function creatorFact(row: Pick<CreatorRow, 'id' | 'name' | 'handles' | 'followers'>) {
  return { creator_id: row.id, name: row.name, handles: row.handles, followers: row.followers, version: nextVersion() };
}

export type PlacementFact = ReturnType<typeof placementFact>;
export type SnapshotFact = ReturnType<typeof snapshotFact>;
export type CreatorFact = ReturnType<typeof creatorFact>;
