import { z } from 'zod';
import { EVENT_TYPES } from '../attribution/ledger/types';
import type { ListReader } from '../attribution/reporting/lists';
import { pageParams } from '../attribution/reporting/paging';
import { eventCursor, ledgerFeed } from './events.queries';
import { listRoute, type PortalReads } from './list';
import { rangeParams } from './range';
import { creatorRef, linkRef } from './schemas';

const eventsQuery = rangeParams.extend({
  event_type: z
    .string()
    .transform((v) => v.split(',').map((t) => t.trim().toLowerCase()))
    .pipe(z.array(z.enum(EVENT_TYPES)))
    .optional()
    .describe(`One or more of ${EVENT_TYPES.join(', ')}, comma-separated`),
  creator_id: z.string().min(1).optional(),
  sandbox: z
    .enum(['true', 'false', '1', '0'])
    .transform((v) => v === 'true' || v === '1')
    .default(false)
    .describe('false (default): live rows; true: sandbox rows'),
  ...pageParams(eventCursor),
});

const ledgerItem = z.object({
  id: z.string(),
  event_type: z.string().describe(EVENT_TYPES.join(', ')),
  transaction_id: z.string(),
  source: z.string().describe('pixel, sdk or a billing provider'),
  amount: z.number().describe('Major units; refunds are negative'),
  currency: z.string(),
  occurred_at: z.iso.datetime(),
  sandbox: z.boolean(),
  external_user_id: z.string().nullable(),
  link: linkRef.nullable(),
  creator: creatorRef.nullable(),
  code: z.string().nullable().describe('Label of the credited creator code'),
  resolution_method: z.string().describe('click, clipboard, code, ip or unattributed'),
  confidence: z.number().nullable(),
});
/** GET /events, the ledger feed (docs/api.md#endpoints-apiclientattribution). */
export const eventRoutes = (deps: ListReader & PortalReads) => [
  listRoute(deps, {
    path: '/events',
    reads: 'attribution',
    summary: 'The ledger feed, newest first, paged with a cursor',
    query: eventsQuery,
    item: ledgerItem,
    read: (brandId, { event_type, creator_id, sandbox, ...page }, range) =>
      ledgerFeed(deps, brandId, { ...range!, eventTypes: event_type, creatorId: creator_id, sandbox }, page),
  }),
];
