import { z } from 'zod';
import { checkDomain, type DomainItem, domainCursor, listDomains, registerDomain, removeDomain, toDomainItem } from '../attribution/domains/domains';
import { pageParams } from '../attribution/reporting/paging';
import { idParams, route } from '../http/route';
import type { PortalDeps } from './deps';
import { listRoute } from './list';
import { ownDomain } from './domains.queries';
import { answer, errorSchema, readErrors } from './schemas';

const domainsQuery = z.object(pageParams(domainCursor));
const createDomain = z.object({ hostname: z.string().max(300).describe('The custom domain, e.g. go.brand.com') });

const portalDomain = z.object({
  id: z.string(),
  hostname: z.string(),
  shared: z.boolean().describe("true: maintained by the operator, usable by every brand, not changeable here"),
  brand_id: z.string().nullable(),
  registered_by: z.enum(['operator', 'portal']).describe('operator: set up by the operator, served at once; portal: added here, served once verified'),
  served: z.boolean().describe('Whether its links open: registered by the operator, or verified'),
  taken: z.boolean().describe('A pending claim whose hostname another brand verified first: it can no longer verify'),
  verification: z.object({
    status: z.string().describe('pending or verified; a verified domain stays verified until removed'),
    checked_at: z.iso.datetime().nullable(),
    records_missing_since: z.iso.datetime().nullable().describe('When a check of a verified domain first found its records gone; null while they are in place'),
  }),
  dns: z.array(z.object({ type: z.string(), name: z.string(), value: z.string() })).describe('Records to create at the DNS host'),
  certificate: z.object({ status: z.string() }),
  created_at: z.iso.datetime(),
});

const notYours = {
  403: errorSchema('forbidden: a shared domain'),
  404: errorSchema("not_found: unknown, or another brand's"),
};

/**
 * /domains (docs/api.md#endpoints-apiclientattribution), on the shared domain functions with the brand's scope.
 * A brand sees shared domains but may change only its own: a shared domain's id answers
 * 403 forbidden, another brand's (like an unknown id) 404 not_found, never telling it exists.
 */
export const domainRoutes = (deps: PortalDeps) => [
  listRoute(deps, {
    path: '/domains',
    summary: "Shared domains plus the brand's custom domains, by hostname",
    query: domainsQuery,
    item: portalDomain,
    reads: null,
    read: async (brandId, page) => {
      const { data, pagination } = await listDomains(deps.db, { brandId }, page);
      return { data: data.map(toJson), pagination };
    },
  }),
  route({
    method: 'POST',
    auth: 'session',
    path: '/domains',
    summary: 'Register a custom domain for this brand; answers the DNS records to create',
    body: createDomain,
    responses: {
      201: portalDomain,
      401: readErrors[401],
      409: errorSchema('domain_taken: served already (verified, or set up by the operator), or already added by this brand'),
      422: errorSchema("invalid_domain: not a host name, or one no brand may add (the service's own host, localhost names, IP addresses, reserved names); invalid_request"),
    },
    async handler({ body }, session) {
      const row = await registerDomain(deps, 'portal', session.brandId, body.hostname);
      return answer(portalDomain, toJson(toDomainItem(row)));
    },
  }),
  route({
    method: 'POST',
    auth: 'session',
    path: '/domains/:id/check',
    summary: 'Re-run hosting verification and refresh the DNS instructions; the first claim of a hostname to verify takes it',
    params: idParams,
    responses: { 200: portalDomain, 401: readErrors[401], ...notYours, 409: errorSchema('domain_taken: another claim of this hostname verified first') },
    async handler({ params }, session) {
      const domain = await ownDomain(deps.db, params.id, session.brandId);
      return answer(portalDomain, toJson(toDomainItem(await checkDomain(deps, domain))));
    },
  }),
  route({
    method: 'DELETE',
    auth: 'session',
    path: '/domains/:id',
    summary: 'Remove a custom domain no link uses',
    params: idParams,
    responses: { 204: null, 401: readErrors[401], ...notYours, 409: errorSchema('domain_has_links') },
    async handler({ params }, session) {
      const domain = await ownDomain(deps.db, params.id, session.brandId);
      await removeDomain(deps, domain.id, { brandId: session.brandId }); // 409 domain_has_links
    },
  }),
];

/** Timestamps as the ISO text JSON carries them. */
function toJson(item: DomainItem) {
  return {
    ...item,
    verification: {
      ...item.verification,
      checked_at: item.verification.checked_at?.toISOString() ?? null,
      records_missing_since: item.verification.records_missing_since?.toISOString() ?? null,
    },
    created_at: item.created_at.toISOString(),
  };
}
