import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../http/errors';
import { enforceRateLimits } from '../http/rate-limit';
import type { Services } from '../services';
import { ApiKeys, apiKeyOf } from './auth';
import { sendCsv } from './csv';
import { openApiDocument } from './openapi';
import { parseQuery, todayUtc } from '../http/query';
import { resolveScope } from './params';
import { DataQueries } from './queries';
import { type DataRequest, type Endpoint, endpoints } from './routes';

/**
 * /api/v1: the read-only Data API. Every endpoint but /openapi.json needs an API key and
 * answers for the key's brand only; campaigns with visible=false never show.
 */
export async function dataApiRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const { db } = services;
  const queries = new DataQueries(services.warehouse);
  const apiKeys = new ApiKeys(db);
  const document = openApiDocument(services.config.publicBaseUrl);

  app.get('/openapi.json', async () => document);

  /** Authenticates, loads the brand, validates the parameters and resolves the scope (in that order). */
  async function open(req: FastifyRequest, reply: FastifyReply, endpoint: Endpoint): Promise<DataRequest<never>> {
    const brandId = await apiKeys.brandIdFor(req);
    // Per API key (CONTRACT 10): counted once the key is known to be valid.
    await enforceRateLimits(reply, services.rateLimiter, [['data_api', apiKeyOf(req)!]]);
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
    const query = parseQuery(endpoint.query, req.query);
    const visibleCampaignIds = campaigns.map((c) => c.id);
    let since: Promise<string | null> | undefined;
    const metricsSince = () => {
      since ??= queries.metricsSince(brandId, visibleCampaignIds);
      return since;
    };
    const scope = await resolveScope(query, {
      brandId,
      defaultPlatforms: brand.default_platforms,
      visibleCampaignIds,
      today: todayUtc(),
      metricsSince,
    });
    const campaignNames = new Map(campaigns.map((c) => [c.id, c.name]));
    return { brand, campaigns, campaignNames, query: query as never, scope, queries, metricsSince };
  }

  for (const endpoint of endpoints) {
    app.get(endpoint.path, async (req, reply) => {
      const r = await open(req, reply, endpoint);
      if (endpoint.kind === 'csv') return sendCsv(reply, await endpoint.handle(r));
      const { data, pagination } = await endpoint.handle(r);
      const meta = {
        brand: { id: r.brand.id, name: r.brand.name },
        start_date: r.scope.start,
        end_date: r.scope.end,
        platforms: r.scope.platforms,
        attribution: r.scope.attribution,
        generated_at: new Date().toISOString(),
      };
      return pagination === undefined ? { data, meta } : { data, meta, pagination };
    });
  }
}
