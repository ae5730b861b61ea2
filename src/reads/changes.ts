import { sql } from 'kysely';
import { ChangeFeed } from '../db/change-feed';
import { type Db, onOwnNotices } from '../db/database';
import type { Logger } from '../logger';

/**
 * What a cached answer's version is made of: per brand, the records it names and the facts it
 * counts, each moved by notifications on a Postgres channel (docs/reads.md).
 */

/** A notification's brand list that stands for every brand (a shared record, or too many to name). */
export const EVERY_BRAND = '*';

/**
 * What changed per brand and area since a cached answer was read: a version per brand and area,
 * moved by notifications `<area> <brand id>,<brand id>` (or `<area> *`) on a Postgres channel and
 * by the feed's own reconnection (anything may have changed while it was away). While the feed is
 * down `live` is false and caches read through.
 */
export class BrandChanges<Area extends string> {
  private readonly feed: ChangeFeed;
  private readonly brands = new Map<string, number>();
  private readonly everyBrand: Map<Area, number>;

  constructor(
    databaseUrl: string,
    readonly channel: string,
    areas: readonly Area[],
    log: Logger,
  ) {
    this.everyBrand = new Map(areas.map((area) => [area, 0]));
    this.feed = new ChangeFeed(databaseUrl, channel, log, (payload) => this.received(payload));
  }

  get live(): boolean {
    return this.feed.live;
  }

  /** Changes whenever this brand's `area` may have changed. */
  version(area: Area, brandId: string): string {
    return `${this.feed.generation}.${this.everyBrand.get(area)}.${this.brands.get(`${area} ${brandId}`) ?? 0}`;
  }

  /** A change made here: this process's next reads see it before its notification comes back. */
  changed(area: Area, brandIds: readonly string[] | 'every brand'): void {
    if (brandIds === 'every brand') this.everyBrand.set(area, this.everyBrand.get(area)! + 1);
    else for (const brandId of brandIds) this.brands.set(`${area} ${brandId}`, (this.brands.get(`${area} ${brandId}`) ?? 0) + 1);
  }

  /**
   * Changes written through `db` (a pool made with this channel in its `ownNotices`) move every
   * brand's versions of their area before the write's statement resolves: this process's next read
   * sees them without waiting for the feed, whichever route or function wrote them.
   */
  followWrites(db: Db): void {
    onOwnNotices(db, (channel, payload) => {
      if (channel !== this.channel) return;
      const area = payload.split(' ')[0] as Area;
      for (const every of this.everyBrand.keys()) if (!area || area === every) this.changed(every, 'every brand');
    });
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

  private received(payload: string): void {
    const [area, list = ''] = payload.split(' ') as [Area, string?];
    if (!area) {
      // A notice naming no area (an older trigger's empty one): anything may have changed.
      for (const every of this.everyBrand.keys()) this.changed(every, 'every brand');
      return;
    }
    if (!this.everyBrand.has(area)) return;
    const ids = list.split(',').filter(Boolean);
    this.changed(area, ids.includes(EVERY_BRAND) ? 'every brand' : ids);
  }
}

/** The channel of record changes: triggers on every table of records answers name (migrations/0011, 0012). */
export const RECORD_CHANGES = 'record_changes';

/**
 * Changes to the records cached answers name (brands, campaigns, creators, links, domains, codes):
 * every statement notifies `records <brand ids>`, or `records *` for shared ones (migrations/0011);
 * and to portal sessions, which notify `sessions *` (migrations/0012).
 */
export type RecordChanges = BrandChanges<'records' | 'sessions'>;

export function recordChanges(databaseUrl: string, log: Logger): RecordChanges {
  return new BrandChanges(databaseUrl, RECORD_CHANGES, ['records', 'sessions'], log);
}

/** What a cached read counts: the Data API's placements (and creators), or attribution facts (clicks, installs, ledger rows). */
export type FactArea = 'placements' | 'attribution';

const FACT_CHANGES = 'fact_changes';
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
  await sql`SELECT pg_notify(${FACT_CHANGES}, payload) FROM unnest(${payloads}::text[]) AS payload`.execute(db);
}

/** Which brands' facts have landed, per area: the writers' notifications (see BrandChanges). */
export type FactChanges = BrandChanges<FactArea>;

export function factChanges(databaseUrl: string, log: Logger): FactChanges {
  return new BrandChanges(databaseUrl, FACT_CHANGES, ['placements', 'attribution'], log);
}
