import type { Warehouse } from '../warehouse/clickhouse';
import { nextVersion } from '../warehouse/values';

export type CreatorProfile = {
  id: string;
  name: string;
  handles: { platform: string; handle: string }[];
  followers: number | null;
};

/**
 * Copies creators into ClickHouse's `creators` table, which /creators and /posts join for
 * names, handles and followers (creators are shared by brands and live in Postgres).
 * Written before the Postgres row, so a creator that exists is always mirrored; a
 * mirror row whose Postgres insert then failed is never joined by any placement.
 */
export async function mirrorCreators(wh: Warehouse, creators: CreatorProfile[]): Promise<void> {
  const version = nextVersion();
  await wh.insert(
    'creators',
    creators.map((c) => ({ creator_id: c.id, name: c.name, handles: c.handles, followers: c.followers, version })),
    `creators:${version}`,
  );
}
