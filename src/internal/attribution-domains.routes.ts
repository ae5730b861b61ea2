import { z } from 'zod';
import {
  checkDomain,
  type DomainDeps,
  domainCursor,
  domainItem,
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

/** /attribution-domains (docs/api.md#links-codes-and-domains): shared and brand-owned vanity domains, as the operator sees them. */
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
    handler: async ({ params }) => domainItem(deps.db, await findDomain(deps.db, params.id, 'operator')),
  }),
  route({
    method: 'POST',
    path: '/attribution-domains',
    summary:
      "Register a domain: shared without brand_id, else the brand's custom domain. Trusted: served at once. A brand's own pending portal claim of the hostname becomes this operator domain",
    body: createBody,
    responses: {
      201: answers.item('The domain, served, with the DNS records that route it here'),
      ...errors.write,
      409: errors.code('domain_taken: the hostname is served already (verified or the operator\'s)'),
    },
    async handler({ body }) {
      return toDomainItem(await registerDomain(deps, 'operator', body.brand_id ?? null, body.hostname));
    },
  }),
  route({
    method: 'POST',
    path: '/attribution-domains/:id/check',
    summary: 'Look the DNS records up again: verified when all are found; a verified domain whose records go stays verified, with records_missing_since',
    params: idParams,
    responses: { 200: answers.item('The domain'), ...errors.one, 409: errors.code('domain_taken: another claim of this hostname verified first') },
    async handler({ params }) {
      const domain = await findDomain(deps.db, params.id, 'operator');
      return toDomainItem(await checkDomain(deps, domain));
    },
  }),
  route({
    method: 'DELETE',
    path: '/attribution-domains/:id',
    summary: 'Remove a domain no link uses',
    params: idParams,
    responses: { 204: null, ...errors.one, 409: errors.code('domain_has_links') },
    async handler({ params }) {
      await removeDomain(deps, params.id, 'operator');
    },
  }),
];
