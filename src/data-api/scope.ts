import { BoundedMap } from '../bounded-map';
import type { Db } from '../db/database';
import { FIRST_DAY, resolveRange, todayUtc } from '../http/query';
import type { RecordChanges } from '../reads/changes';
import type { Reads } from '../reads/pipeline';
import type { Warehouse } from '../warehouse/clickhouse';
import { type CommonQuery, resolveScope, type Scope } from './params';
import { DataQueries } from './queries';

/** The scope step of a Data API read (src/reads/pipeline.ts): the brand's records and the query resolved against them. */

export type Campaign = { id: string; name: string; status: string; start_date: string | null; end_date: string | null };
export type Brand = { id: string; name: string; logo_url: string | null; default_platforms: string[] };
type BrandRecord = { brand: Brand; campaigns: Campaign[] };

/** The inclusive range of days an answer states (meta, CSV file names, the daily rows). */
export type AnswerRange = { start: string; end: string };

/** A validated request in its scope: the brand, its visible campaigns, the parameters and the resolved scope. */
export type DataRequest<Q> = BrandRecord & {
  queries: DataQueries;
  campaignNames: Map<string, string>;
  query: Q;
  /** What the questions count. Its start may be FIRST_DAY where that counts the same (see countsFromFirstDay): state range() instead. */
  scope: Scope;
  /** The range the answer states. */
  range(): Promise<AnswerRange>;
  metricsSince(): Promise<string | null>;
};

/**
 * Questions over period=all that need not wait for the brand's first posting day (a statement of
 * its own, 5 ms on embedded ClickHouse), which only the stated range needs: they count from
 * FIRST_DAY beside that look-up. upload_date counts every placement posted up to today, none posted
 * before that day. A daily answer's rows are per day, and those outside the stated range are not
 * answered (dailyRows); view_date's other questions wait, as activity may precede the posting day.
 */
const countsFromFirstDay = (q: CommonQuery, perDay: boolean) =>
  (q.attribution === 'upload_date' || perDay) && q.start_date === undefined && q.end_date === undefined && (q.period ?? 'all') === 'all';

/** What every Data API read uses: the pipeline, the ClickHouse queries and the brands' records. */
export class DataReader {
  readonly queries: DataQueries;
  private readonly brands: BrandDirectory;

  constructor(
    db: Db,
    warehouse: Warehouse,
    readonly reads: Reads,
  ) {
    this.queries = new DataQueries(warehouse, db);
    this.brands = new BrandDirectory(db, reads.records);
  }

  /** The brand and its visible campaigns; undefined when the brand is gone. */
  brand(brandId: string): Promise<BrandRecord | undefined> {
    return this.brands.get(brandId);
  }

  /** Resolves a validated query's scope against the brand (campaigns visible to it, its first posting day). */
  async scope<Q extends CommonQuery>(brandId: string, query: Q, answer: { perDay?: boolean } = {}): Promise<DataRequest<Q>> {
    const found = await this.brands.get(brandId);
    // Authentication found the brand a moment ago: only a brand deleted since then is missing.
    if (!found) throw new Error(`brand ${brandId} was deleted during the request`);
    const { brand, campaigns } = found;
    const visibleCampaignIds = campaigns.map((c) => c.id);
    let since: Promise<string | null> | undefined;
    // The first posting day changes only when placements land: kept as the answers are.
    const metricsSince = () => {
      since ??= this.reads.value(brand.id, 'placements', `metrics_since ${visibleCampaignIds.join(',')}`, () => this.queries.metricsSince(brand.id, visibleCampaignIds));
      return since;
    };
    const context = { brandId: brand.id, defaultPlatforms: brand.default_platforms, visibleCampaignIds, today: todayUtc(), metricsSince };
    let range: () => Promise<AnswerRange>;
    let scope: Scope;
    if (countsFromFirstDay(query, answer.perDay ?? false)) {
      scope = await resolveScope(query, { ...context, metricsSince: async () => FIRST_DAY });
      const stated = resolveRange(query, context.today, metricsSince);
      stated.catch(() => {}); // a failed look-up fails the request where range() is awaited
      range = () => stated;
    } else {
      scope = await resolveScope(query, context);
      const stated = Promise.resolve({ start: scope.start, end: scope.end });
      range = () => stated;
    }
    const campaignNames = new Map(campaigns.map((c) => [c.id, c.name]));
    return { brand, campaigns, queries: this.queries, campaignNames, query, scope, range, metricsSince };
  }
}

/**
 * Brands and their visible campaigns, read from Postgres once per change of those records
 * (the brand's record changes); while the feed is down every request reads them.
 */
class BrandDirectory {
  private readonly cache = new BoundedMap<string, { version: string; record: Promise<BrandRecord | undefined> }>({ maxEntries: 10_000 });

  constructor(
    private readonly db: Db,
    private readonly changes: RecordChanges,
  ) {}

  get(brandId: string): Promise<BrandRecord | undefined> {
    if (!this.changes.live) return this.read(brandId);
    const version = this.changes.version('records', brandId);
    const hit = this.cache.get(brandId);
    if (hit?.version === version) return hit.record;
    const record = this.read(brandId);
    record.catch(() => {
      if (this.cache.get(brandId)?.record === record) this.cache.delete(brandId);
    });
    this.cache.set(brandId, { version, record });
    return record;
  }

  private async read(brandId: string): Promise<BrandRecord | undefined> {
    const [brand, campaigns] = await Promise.all([
      this.db
        .selectFrom('brands')
        .select(['id', 'name', 'logo_url', 'default_platforms'])
        .where('id', '=', brandId)
        .executeTakeFirst(),
      this.db
        .selectFrom('campaigns')
        .select(['id', 'name', 'status', 'start_date', 'end_date'])
        .where('brand_id', '=', brandId)
        .where('visible', '=', true)
        .orderBy('created_at')
        .orderBy('id')
        .execute(),
    ]);
    return brand && { brand, campaigns };
  }
}
