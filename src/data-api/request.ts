import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/database';
import { HttpError } from '../http/errors';
import { todayUtc } from '../http/query';
import { enforceRateLimits, type RateLimiter } from '../http/rate-limit';
import type { Warehouse } from '../warehouse/clickhouse';
import { ApiKeys, apiKeyOf } from './auth';
import { type CommonQuery, resolveScope, type Scope } from './params';
import { DataQueries } from './queries';

/** What the Data API reads with: it never writes, so it holds no queue. */
export type DataApiDeps = { db: Db; warehouse: Warehouse; publicBaseUrl: string; rateLimiter: RateLimiter };

export type Campaign = { id: string; name: string; status: string; start_date: string | null; end_date: string | null };
export type Brand = { id: string; name: string; logo_url: string | null; default_platforms: string[] };

/** An authenticated request's brand, before its parameters are read. */
export type DataContext = { brand: Brand; campaigns: Campaign[]; queries: DataQueries };

/** An authenticated, validated request: its brand, parameters and resolved scope. */
export type DataRequest<Q> = DataContext & {
  campaignNames: Map<string, string>;
  query: Q;
  scope: Scope;
  metricsSince(): Promise<string | null>;
};

/** Authenticates the API key, counts it against its rate limit and loads its brand (in that order). */
export function dataContext({ db, warehouse, rateLimiter }: DataApiDeps) {
  const queries = new DataQueries(warehouse);
  const apiKeys = new ApiKeys(db);
  return async function open(req: FastifyRequest, reply: FastifyReply): Promise<DataContext> {
    const brandId = await apiKeys.brandIdFor(req);
    // Per API key (CONTRACT 10): counted once the key is known to be valid.
    await enforceRateLimits(reply, rateLimiter, [['data_api', apiKeyOf(req)!]]);
    const [brand, campaigns] = await Promise.all([
      db
        .selectFrom('brands')
        .select(['id', 'name', 'logo_url', 'default_platforms'])
        .where('id', '=', brandId)
        .executeTakeFirst(),
      db
        .selectFrom('campaigns')
        .select(['id', 'name', 'status', 'start_date', 'end_date'])
        .where('brand_id', '=', brandId)
        .where('visible', '=', true)
        .orderBy('created_at')
        .orderBy('id')
        .execute(),
    ]);
    if (!brand) throw new HttpError(401, { error: 'invalid_api_key' });
    return { brand, campaigns, queries };
  };
}

/** Resolves a validated query's scope against the brand (campaigns visible to it, its first posting day). */
export async function dataRequest<Q extends CommonQuery>(ctx: DataContext, query: Q): Promise<DataRequest<Q>> {
  const { brand, campaigns, queries } = ctx;
  const visibleCampaignIds = campaigns.map((c) => c.id);
  let since: Promise<string | null> | undefined;
  const metricsSince = () => {
    since ??= queries.metricsSince(brand.id, visibleCampaignIds);
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
