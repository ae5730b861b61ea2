import type { ChangeFeed } from '../../db/change-feed';
import type { Db } from '../../db/database';
import { normalizeHostname } from '../domains/hostname';
import { BoundedMap, rememberedText } from '../../bounded-map';
import { Batcher } from '../../db/batcher';
import { Memo } from './memo';
import { linksWithDomain } from './queries';

/** A link as the click endpoint serves it. */
export type ServedLink = {
  id: number;
  brandId: string;
  brandName: string;
  brandLogoUrl: string | null;
  creatorId: string;
  domain: string;
  slug: string;
  type: 'web' | 'app';
  destinationUrl: string;
  iosUrl: string | null;
  androidUrl: string | null;
  /** Where an installed app opens on this link (POST /opens answers it), or null. */
  deepLink?: string | null;
};

/**
 * The host a visitor hit as links are stored: lower case, no port (an empty one too, as URLs allow),
 * no leading `www.`. Recent hosts are remembered as sent (up to a host name and port long): a
 * brand's clicks come from a few, and IDNA mapping is a share of each click's cost.
 */
export const clickedDomain = rememberedText((domain) => normalizeHostname(domain.trim().replace(/:\d*$/, '')), {
  maxEntries: 10_000,
  maxLength: 260,
});

/** The path after the domain, without surrounding slashes, query or fragment: `/jane/?x=1` → `jane`. */
export function clickedSlug(slug: string | null | undefined): string {
  return (slug ?? '').split(/[?#]/)[0]!.trim().replace(/^\/+|\/+$/g, '');
}

type LinkCandidate = ServedLink & { active: boolean };

/**
 * The link a click on `domain`/`slug` is served by: that slug's link in any case, else the root
 * link (slug ''), never an inactive one. Answers are cached until the `link_changes`
 * feed moves and read through while it is down; concurrent misses share one query. When Postgres
 * cannot answer, a link read before serves however old (only one never read is a 503).
 */
export class ClickLinks {
  private readonly batcher = new Batcher<{ domain: string; slug: string }, ServedLink | null>((clicks) => this.resolve(clicks));
  /**
   * Answers by domain/slug with the feed generation they were read in (fresh while it is current
   * and the feed live), bounded in entries and estimated bytes whatever hosts and slugs visitors make up.
   */
  private readonly served: BoundedMap<string, { link: ServedLink | null; generation: number }>;

  constructor(
    private readonly db: Db,
    private readonly changes: ChangeFeed,
    maxEntries = 100_000,
    maxBytes = 32 * 1024 * 1024,
  ) {
    this.served = new BoundedMap({ maxEntries, maxBytes });
  }

  /** The cache's estimated size in bytes. */
  get cachedBytes(): number {
    return this.served.bytes;
  }

  async forClick(domain: string, slug: string): Promise<ServedLink | null> {
    const click = { domain, slug: slug.toLowerCase() };
    const key = `${click.domain}/${click.slug}`;
    const generation = this.changes.generation;
    const cached = this.served.get(key);
    if (cached?.generation === generation && this.changes.live) return cached.link;
    let link: ServedLink | null;
    try {
      link = await this.batcher.call(click);
    } catch (err) {
      if (cached?.link) return cached.link;
      throw err;
    }
    // Full, the oldest answers make room: a flood of made-up slugs cannot empty the cache at once.
    if (this.changes.generation === generation) this.served.set(key, { link, generation }, cacheBytes(key, link));
    return link;
  }

  private async resolve(clicks: { domain: string; slug: string }[]): Promise<(ServedLink | null)[]> {
    const candidates = await linksWithDomain(this.db)
      .innerJoin('brands as b', 'b.id', 'l.brand_id')
      .select([
        'l.brand_id as brandId',
        'b.name as brandName',
        'b.logo_url as brandLogoUrl',
        'l.creator_id as creatorId',
        'l.type',
        'l.destination_url as destinationUrl',
        'l.ios_url as iosUrl',
        'l.android_url as androidUrl',
        'l.deep_link as deepLink',
        'l.active',
      ])
      .where('d.hostname', 'in', [...new Set(clicks.map((c) => c.domain))])
      // A brand's pending portal claim resolves nothing (several brands may claim one hostname).
      .where((eb) => eb.or([eb('d.registered_by', '=', 'operator'), eb('d.verification_status', '=', 'verified')]))
      .where((eb) => eb(eb.fn('lower', ['l.slug']), 'in', [...new Set(['', ...clicks.map((c) => c.slug)])]))
      .execute();
    const byKey = new Map<string, LinkCandidate>(candidates.map((l) => [`${l.domain}/${l.slug.toLowerCase()}`, l]));
    return clicks.map(({ domain, slug }) => {
      const link = byKey.get(`${domain}/${slug}`) ?? byKey.get(`${domain}/`);
      if (!link?.active) return null;
      const { active: _, ...served } = link;
      return served;
    });
  }
}

/** A cached answer's estimated memory: two bytes a character of its key and answer, plus the map entry. */
function cacheBytes(key: string, link: ServedLink | null): number {
  return 2 * (key.length + (link ? JSON.stringify(link).length : 0)) + 64;
}

/** What a ledger row or an install records of the link it is credited to. */
export type CreditedLink = {
  id: number;
  brandId: string;
  domain: string;
  slug: string;
  creator: { id: string; name: string };
};

/**
 * Looks links up by id for crediting click tokens. A link's brand, creator, domain and
 * slug never change after creation, so answers are memoised; deactivating a link stops
 * new clicks but does not withdraw the credit of tokens it already minted.
 */
export class LinkDirectory {
  private readonly memo = new Memo<CreditedLink>(10 * 60_000);

  constructor(private readonly db: Db) {}

  byId(id: number): Promise<CreditedLink | null> {
    return this.memo.get(String(id), async () => {
      const row = await linksWithDomain(this.db)
        .innerJoin('creators as c', 'c.id', 'l.creator_id')
        .select(['l.brand_id', 'c.id as creator_id', 'c.name as creator_name'])
        .where('l.id', '=', id)
        .executeTakeFirst();
      if (!row) return null;
      return {
        id: row.id,
        brandId: row.brand_id,
        domain: row.domain,
        slug: row.slug,
        creator: { id: row.creator_id, name: row.creator_name },
      };
    });
  }
}
