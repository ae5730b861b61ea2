import { z } from 'zod';
import {
  checkDomain,
  type DomainDeps,
  domainCursor,
  findDomain,
  hostingStatus,
  listDomains,
  registerDomain,
  removeDomain,
  toDomainItem,
} from '../attribution/domains/domains';
import { pageParams } from '../attribution/reporting/paging';
import { idParams, route } from '../http/route';
import { answers, errors } from './schemas';

const createBody = z.object({
  hostname: z.string().max(300),
  brand_id: z.string().min(1).nullish(),
});

const listQuery = z.object(pageParams(domainCursor));

/** /attribution-domains (SPEC 4.5): shared and brand-owned vanity domains, as the operator sees them. */
export const attributionDomainRoutes = (deps: DomainDeps) => [
  route({
    method: 'GET',
    path: '/attribution-domains',
    summary: 'Every domain, shared and brand-owned, by hostname, with the hosting status',
    query: listQuery,
    responses: { 200: answers.page('domains (and `hosting`)'), ...errors.read },
    handler: async ({ query }) => ({ ...(await listDomains(deps.db, 'operator', query)), hosting: hostingStatus() }),
  }),
  route({
    method: 'GET',
    path: '/attribution-domains/:id',
    summary: 'One domain with its DNS instructions',
    params: idParams,
    responses: { 200: answers.item('The domain'), ...errors.one },
    handler: async ({ params }) => toDomainItem(await findDomain(deps.db, params.id, 'operator')),
  }),
  route({
    method: 'POST',
    path: '/attribution-domains',
    writesRecords: true,
    summary: "Register a domain: shared without brand_id, else the brand's custom domain",
    body: createBody,
    responses: { 201: answers.item('The domain, pending, with the DNS records to create'), ...errors.write, 409: errors.code('domain_taken') },
    async handler({ body }) {
      return toDomainItem(await registerDomain(deps, body.brand_id ?? null, body.hostname));
    },
  }),
  route({
    method: 'POST',
    path: '/attribution-domains/:id/check',
    writesRecords: true,
    summary: 'Look the DNS records up again: verified when all are found',
    params: idParams,
    responses: { 200: answers.item('The domain'), ...errors.one },
    async handler({ params }) {
      const domain = await findDomain(deps.db, params.id, 'operator');
      return toDomainItem(await checkDomain(deps, domain));
    },
  }),
  route({
    method: 'DELETE',
    path: '/attribution-domains/:id',
    writesRecords: true,
    summary: 'Remove a domain no link uses',
    params: idParams,
    responses: { 204: null, ...errors.one, 409: errors.code('domain_has_links') },
    async handler({ params }) {
      await removeDomain(deps, params.id, 'operator');
    },
  }),
];
