import type { FastifyInstance } from 'fastify';
import { documentRoute } from '../http/openapi';
import { mountRoutes } from '../http/route';
import { dataApiDocument } from './openapi';
import { type DataApiDeps, dataContext } from './request';
import { endpoints } from './routes';

/**
 * /api/v1: the read-only Data API. Every endpoint but /openapi.json is called with an API key
 * (auth 'api_key', ./request.ts) and answers for the key's brand only; campaigns with
 * visible=false never show.
 */
export async function dataApiRoutes(app: FastifyInstance, deps: DataApiDeps) {
  const document = documentRoute(() => dataApiDocument(deps.publicBaseUrl, [...endpoints, document]));
  // Authenticated, counted and the brand loaded before the parameters are read.
  mountRoutes(app, [document, ...endpoints], { gates: { api_key: dataContext(deps) }, rateLimiter: deps.rateLimiter, queryErrors: 'invalid_parameter' });
}
