import { z } from 'zod';
import { type ListReader, linkCursor, listLinks } from '../attribution/reporting/lists';
import { pageParams } from '../attribution/reporting/paging';
import { listRoute, type PortalReads } from './list';
import { rangeParams, totalsRange } from './range';
import { creatorRef, money } from './schemas';

const linksQuery = rangeParams.extend({ creator_id: z.string().min(1).optional(), ...pageParams(linkCursor) });

/** A link as the brand sees it: no brand or pixel key, the creator as {id, name}. */
const portalLink = z.object({
  id: z.string().describe('The link id as text; the ledger feed and install answers give the same id as an integer'),
  domain_id: z.string(),
  domain: z.string(),
  slug: z.string().describe("'' is the domain's root link"),
  type: z.enum(['web', 'app']),
  active: z.boolean(),
  destination_url: z.string(),
  ios_url: z.string().nullable(),
  android_url: z.string().nullable(),
  deep_link: z.string().nullable().describe('Where an installed app opens on this link (a path or an app URL), or null'),
  creator: creatorRef,
  clicks: z.number().int().describe("People's clicks in the range"),
  bot_clicks: z.number().int().describe('Clicks by crawlers, link previews and prefetches: stored, never in clicks'),
  installs: z.number().int(),
  conversions: z.number().int(),
  revenue: money,
});
/** GET /links (docs/api.md#endpoints-apiclientattribution): a page of the brand's links by id, totals for the range. */
export const linkRoutes = (deps: ListReader & PortalReads) => [
  listRoute(deps, {
    path: '/links',
    reads: 'attribution',
    summary: "The brand's creator links with clicks, installs, conversions and revenue in the range",
    query: linksQuery,
    item: portalLink,
    read: (brandId, { creator_id, ...page }, range) => listLinks(deps, { brandId, creatorId: creator_id }, page, totalsRange(range!)),
  }),
];
