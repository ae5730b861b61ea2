import { sql } from 'kysely';
import { ChangeFeed } from '../db/change-feed';
import type { Db } from '../db/database';
import type { Logger } from '../logger';

/** What a cached read counts: the Data API's placements (and creators), or attribution facts (clicks, installs, ledger rows). */
export type FactArea = 'placements' | 'attribution';

const CHANNEL = 'fact_changes';
const EVERY_BRAND = '*';
/** Postgres refuses a NOTIFY payload of 8,000 bytes: brand ids go out in groups. */
const BRANDS_PER_NOTIFICATION = 100;

/**
 * Tells every API process that these brands' facts of `area` are now queryable: the writers call
 * it once ClickHouse has a batch. One statement, one notification per group of brands.
 */
export async function publishFactChanges(db: Db, area: FactArea, brandIds: Iterable<string> | 'every brand'): Promise<void> {
  const ids = brandIds === 'every brand' ? [EVERY_BRAND] : [...new Set(brandIds)];
  const payloads: string[] = [];
  for (let i = 0; i < ids.length; i += BRANDS_PER_NOTIFICATION) payloads.push(`${area} ${ids.slice(i, i + BRANDS_PER_NOTIFICATION).join(',')}`);
  if (payloads.length === 0) return;
  await sql`SELECT pg_notify(${CHANNEL}, payload) FROM unnest(${payloads}::text[]) AS payload`.execute(db);
}

/**
 * Which brands' facts have landed since a cached answer was read: a version per brand and area,
 * moved by the writers' notifications, and by the feed's own reconnection (anything may have
 * landed while it was away). While the feed is down `live` is false and caches read through.
 */
export class FactChanges {
  private readonly feed: ChangeFeed;
  private readonly brands = new Map<string, number>();
  private readonly everyBrand: Record<FactArea, number> = { placements: 0, attribution: 0 };

  constructor(databaseUrl: string, log: Logger) {
    this.feed = new ChangeFeed(databaseUrl, CHANNEL, log, (payload) => this.landed(payload));
  }

  get live(): boolean {
    return this.feed.live;
  }

  /** Changes whenever facts of `area` for this brand may have changed. */
  version(area: FactArea, brandId: string): string {
    return `${this.feed.generation}.${this.everyBrand[area]}.${this.brands.get(`${area} ${brandId}`) ?? 0}`;
  }

  start(): Promise<void> {
    return this.feed.start();
  }

  /** Resolves once every notification committed before the call has been taken (see ChangeFeed.caughtUp). */
  caughtUp(): Promise<void> {
    return this.feed.caughtUp();
  }

  close(): Promise<void> {
    return this.feed.close();
  }

  private landed(payload: string): void {
    const [area, list = ''] = payload.split(' ') as [FactArea, string?];
    if (!(area in this.everyBrand)) return;
    for (const brandId of list.split(',')) {
      if (brandId === EVERY_BRAND) this.everyBrand[area]++;
      else if (brandId) this.brands.set(`${area} ${brandId}`, (this.brands.get(`${area} ${brandId}`) ?? 0) + 1);
    }
  }
}
