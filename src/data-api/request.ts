import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/database';
import { refuse } from '../refusal';
import { enforceRateLimit, type RateLimiter, type RateLimitKind, refuseWhenSpent } from '../http/rate-limit';
import type { Gate } from '../http/route';
import type { Reads } from '../reads/pipeline';
import type { Warehouse } from '../warehouse/clickhouse';
import { ApiKeys, apiKeyOf } from './auth';
import { DataReader } from './scope';

/** What the Data API reads with: it never writes, so it holds no queue. */
export type DataApiDeps = {
  db: Db;
  warehouse: Warehouse;
  publicBaseUrl: string;
  rateLimiter: RateLimiter;
  /** The read pipeline: answers kept per brand and question until what they depend on changes (src/reads/). */
  reads: Reads;
};

/** An authenticated request: its brand, and what its read runs on (./scope.ts). */
export type DataContext = { brandId: string; reader: DataReader };

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
export function dataContext({ db, warehouse, rateLimiter, reads }: DataApiDeps) {
  const reader = new DataReader(db, warehouse, reads);
  const apiKeys = new ApiKeys(db);
  const resolve = async (req: FastifyRequest, reply: FastifyReply, limits: RateLimitKind[]): Promise<DataContext> => {
    // Per API key (docs/operations.md#rate-limits), a wrong one too: its 401 carries the RateLimit headers, and guessing is limited.
    const key = apiKeyOf(req);
    // Wrong keys per client IP (docs/hardening.md): past their limit, refused before any look-up.
    if (key) await refuseWhenSpent(reply, rateLimiter, 'failed_key', req.ip);
    if (key && limits.includes('data_api')) await enforceRateLimit(reply, rateLimiter, 'data_api', key);
    const brandId = await apiKeys.brandIdFor(key, () => rateLimiter.consume('failed_key', req.ip));
    if (!(await reader.brand(brandId))) throw refuse(401, 'invalid_api_key');
    return { brandId, reader };
  };
  const gate: Gate<'api_key'> = { at: 'handler', limits: ['data_api'], resolve };
  return gate;
}
