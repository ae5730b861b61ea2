import { z } from 'zod';
import { codeCursor, type ListReader, listCodes } from '../attribution/reporting/lists';
import { pageParams } from '../attribution/reporting/paging';
import { listRoute, type PortalReads } from './list';
import { rangeParams, totalsRange } from './range';
import { creatorRef, money } from './schemas';

const codesQuery = rangeParams.extend({ creator_id: z.string().min(1).optional(), ...pageParams(codeCursor) });

const portalCode = z.object({
  id: z.string(),
  label: z.string(),
  active: z.boolean(),
  creator: creatorRef,
  conversions: z.number().int(),
  revenue: money,
});
/** GET /codes (docs/api.md#endpoints-apiclientattribution): a page of the brand's codes by label, totals for the range (read-only). */
export const codeRoutes = (deps: ListReader & PortalReads) => [
  listRoute(deps, {
    path: '/codes',
    reads: 'attribution',
    summary: "The brand's creator codes with conversions and revenue in the range (read-only)",
    query: codesQuery,
    item: portalCode,
    read: (brandId, { creator_id, ...page }, range) => listCodes(deps, { brandId, creatorId: creator_id }, page, totalsRange(range!)),
  }),
];
