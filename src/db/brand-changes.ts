import type { Logger } from '../logger';
import { ChangeFeed } from './change-feed';

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

  constructor(databaseUrl: string, channel: string, areas: readonly Area[], log: Logger) {
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
