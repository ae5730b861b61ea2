import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { checkDomain, type DomainItem, domainCursor, listDomains, registerDomain, removeDomain, toDomainItem } from '../attribution/domains/domains';
import { pageParams } from '../attribution/reporting/paging';
import { parseQuery } from '../http/query';
import type { Db } from '../db/database';
import { HttpError, notFound } from '../http/errors';
import type { Services } from '../services';
import { answer, errorSchema, type Operations, pagination, readErrors } from './schemas';

const domainsQuery = z.object(pageParams(domainCursor));
const domainParams = z.object({ id: z.string() });
const createDomain = z.object({ hostname: z.string().max(300).describe('The custom domain, e.g. go.brand.com') });

const portalDomain = z.object({
  id: z.string(),
  hostname: z.string(),
  shared: z.boolean().describe("true: maintained by the operator, usable by every brand, not changeable here"),
  brand_id: z.string().nullable(),
  verification: z.object({ status: z.string().describe('pending or verified'), checked_at: z.iso.datetime().nullable() }),
  dns: z.array(z.object({ type: z.string(), name: z.string(), value: z.string() })).describe('Records to create at the DNS host'),
  certificate: z.object({ status: z.string() }),
  created_at: z.iso.datetime(),
});
const domainsAnswer = z.object({ data: z.array(portalDomain), pagination });

const notYours = {
  403: errorSchema('forbidden: a shared domain'),
  404: errorSchema("not_found: unknown, or another brand's"),
};

export const domainOperations: Operations = {
  'GET /domains': {
    summary: "Shared domains plus the brand's custom domains, by hostname",
    query: domainsQuery,
    responses: { 200: domainsAnswer, ...readErrors },
  },
  'POST /domains': {
    summary: 'Register a custom domain for this brand; answers the DNS records to create',
    body: createDomain,
    responses: { 201: portalDomain, 401: readErrors[401], 409: errorSchema('domain_taken'), 422: errorSchema('invalid_request') },
  },
  'POST /domains/:id/check': {
    summary: 'Re-run hosting verification and refresh the DNS instructions',
    params: domainParams,
    responses: { 200: portalDomain, 401: readErrors[401], ...notYours },
  },
  'DELETE /domains/:id': {
    summary: 'Remove a custom domain no link uses',
    params: domainParams,
    responses: { 204: null, 401: readErrors[401], ...notYours, 409: errorSchema('domain_has_links') },
  },
};

/**
 * /domains (SPEC 4.4, CONTRACT 8), on the shared domain functions with the brand's scope.
 * A brand sees shared domains but may change only its own: a shared domain's id answers
 * 403 forbidden, another brand's (like an unknown id) 404 not_found, never telling it exists.
 */
export async function domainRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const { db } = services;

  app.get('/domains', async (req) => {
    const page = parseQuery(domainsQuery, req.query);
    const { data, pagination } = await listDomains(db, { brandId: req.portal!.brandId }, page);
    return answer(domainsAnswer, { data: data.map(toJson), pagination });
  });

  app.post('/domains', async (req, reply) => {
    const body = createDomain.parse(req.body);
    const row = await registerDomain(services, req.portal!.brandId, body.hostname);
    return reply.status(201).send(answer(portalDomain, toJson(toDomainItem(row))));
  });

  app.post('/domains/:id/check', async (req) => {
    const domain = await ownDomain(db, domainParams.parse(req.params).id, req.portal!.brandId);
    return answer(portalDomain, toJson(toDomainItem(await checkDomain(services, domain))));
  });

  app.delete('/domains/:id', async (req, reply) => {
    const domain = await ownDomain(db, domainParams.parse(req.params).id, req.portal!.brandId);
    await removeDomain(services, domain.id, { brandId: req.portal!.brandId }); // 409 domain_has_links
    return reply.status(204).send();
  });
}

/** The brand's own custom domain `id`; 403 for a shared one, 404 for any other. */
async function ownDomain(db: Db, id: string, brandId: string) {
  const row = await db
    .selectFrom('domains')
    .selectAll()
    .where('id', '=', id)
    .where((eb) => eb.or([eb('brand_id', '=', brandId), eb('brand_id', 'is', null)]))
    .executeTakeFirst();
  if (!row) throw notFound();
  if (row.brand_id === null) throw new HttpError(403, { error: 'forbidden' });
  return row;
}

/** Timestamps as the ISO text JSON carries them. */
function toJson(item: DomainItem) {
  return {
    ...item,
    verification: { ...item.verification, checked_at: item.verification.checked_at?.toISOString() ?? null },
    created_at: item.created_at.toISOString(),
  };
}
