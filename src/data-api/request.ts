import type { FastifyReply, FastifyRequest } from 'fastify';
import { BoundedMap } from '../bounded-map';
import type { RecordChanges } from '../db/record-changes';
import type { Db } from '../db/database';
import type { AnswerCache } from '../http/answer-cache';
import { refuse } from '../refusal';
import { todayUtc } from '../http/query';
import { enforceRateLimit, type RateLimiter, type RateLimitKind, refuseWhenSpent } from '../http/rate-limit';
import type { Gate } from '../http/route';
import type { Warehouse } from '../warehouse/clickhouse';
import { ApiKeys, apiKeyOf } from './auth';
import { type CommonQuery, resolveScope, type Scope } from './params';
import { DataQueries } from './queries';

/** What the Data API reads with: it never writes, so it holds no queue. */
export type DataApiDeps = {
  db: Db;
  warehouse: Warehouse;
  publicBaseUrl: string;
  rateLimiter: RateLimiter;
  /** Answers cached per brand and question until facts land (src/http/answer-cache.ts). */
  answers: AnswerCache;
  /** Changes to brands and campaigns, per brand (migrations/0011): the brand directory follows it. */
  recordChanges: RecordChanges;
};

export type Campaign = { id: string; name: string; status: string; start_date: string | null; end_date: string | null };
export type Brand = { id: string; name: string; logo_url: string | null; default_platforms: string[] };

/** An authenticated request's brand, before its parameters are read. */
export type DataContext = {
  brand: Brand;
  campaigns: Campaign[];
  queries: DataQueries;
  answers: AnswerCache;
  /** The answers' version taken before the brand and campaigns were read: answers made from them are kept under it. */
  version: string;
};

/** An authenticated, validated request: its brand, parameters and resolved scope. */
export type DataRequest<Q> = DataContext & {
  campaignNames: Map<string, string>;
  query: Q;
  scope: Scope;
  metricsSince(): Promise<string | null>;
};

declare module '../http/route' {
  interface Callers {
    /** A Data API key's brand (auth 'api_key'). */
    api_key: DataContext;
  }
}

/**
 * The gate of auth 'api_key' (src/http/route.ts): counts the API key against its rate limit,
 * authenticates it and loads its brand (in that order), before the parameters are read.
 */
export function dataContext({ db, warehouse, rateLimiter, answers, recordChanges }: DataApiDeps) {
  const queries = new DataQueries(warehouse);
  const apiKeys = new ApiKeys(db);
  const brands = new BrandDirectory(db, recordChanges);
  const resolve = async (req: FastifyRequest, reply: FastifyReply, limits: RateLimitKind[]): Promise<DataContext> => {
    // Per API key (CONTRACT 10), a wrong one too: its 401 carries the RateLimit headers, and guessing is limited.
    const key = apiKeyOf(req);
    // Wrong keys per client IP (docs/hardening.md): past their limit, refused before any look-up.
    if (key) await refuseWhenSpent(reply, rateLimiter, 'failed_key', req.ip);
    if (key && limits.includes('data_api')) await enforceRateLimit(reply, rateLimiter, 'data_api', key);
    const brandId = await apiKeys.brandIdFor(key, () => rateLimiter.consume('failed_key', req.ip));
    // Before the brand's records are read: a change while they are read leaves the answer stale, never kept as new.
    const version = answers.version('placements', brandId);
    const found = await brands.get(brandId);
    if (!found) throw refuse(401, 'invalid_api_key');
    return { ...found, queries, answers, version };
  };
  const gate: Gate<'api_key'> = { at: 'handler', limits: ['data_api'], resolve };
  return gate;
}

type BrandRecord = { brand: Brand; campaigns: Campaign[] };

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

/** Resolves a validated query's scope against the brand (campaigns visible to it, its first posting day). */
export async function dataRequest<Q extends CommonQuery>(ctx: DataContext, query: Q): Promise<DataRequest<Q>> {
  const { brand, campaigns, queries, answers } = ctx;
  const visibleCampaignIds = campaigns.map((c) => c.id);
  let since: Promise<string | null> | undefined;
  // The first posting day changes only when placements land: cached with the answers.
  const metricsSince = () => {
    since ??= answers
      .answer('placements', brand.id, `metrics_since ${visibleCampaignIds.join(',')}`, async () =>
        JSON.stringify(await queries.metricsSince(brand.id, visibleCampaignIds)),
      )
      .then((text) => JSON.parse(text) as string | null);
    return since;
  };
  const scope = await resolveScope(query, {
    brandId: brand.id,
    defaultPlatforms: brand.default_platforms,
    visibleCampaignIds,
    today: todayUtc(),
    metricsSince,
  });
  const campaignNames = new Map(campaigns.map((c) => [c.id, c.name]));
  return { ...ctx, campaignNames, query, scope, metricsSince };
}
