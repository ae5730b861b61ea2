import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { codeCursor, listCodes } from '../attribution/reporting/lists';
import { pageParams } from '../attribution/reporting/paging';
import { parseQuery } from '../http/query';
import type { Services } from '../services';
import { portalRange, rangeParams, totalsRange } from './range';
import { answer, creatorRef, dateRange, money, type Operations, pagination, readErrors } from './schemas';

const codesQuery = rangeParams.extend({ creator_id: z.string().min(1).optional(), ...pageParams(codeCursor) });

const portalCode = z.object({
  id: z.string(),
  label: z.string(),
  active: z.boolean(),
  creator: creatorRef,
  conversions: z.number().int(),
  revenue: money,
});
const codesAnswer = z.object({ data: z.array(portalCode), pagination, ...dateRange });

export const codeOperations: Operations = {
  'GET /codes': {
    summary: "The brand's creator codes with conversions and revenue in the range (read-only)",
    query: codesQuery,
    responses: { 200: codesAnswer, ...readErrors },
  },
};

/** GET /codes (SPEC 4.4, CONTRACT 8): a page of the brand's codes by label, totals for the range. */
export async function codeRoutes(app: FastifyInstance, { services }: { services: Services }) {
  app.get('/codes', async (req) => {
    const brandId = req.portal!.brandId;
    const { period, start_date, end_date, creator_id, ...page } = parseQuery(codesQuery, req.query);
    const range = await portalRange(services.warehouse, brandId, { period, start_date, end_date });
    const { data, pagination } = await listCodes(services, { brandId, creatorId: creator_id }, page, totalsRange(range));
    return answer(codesAnswer, { data, pagination, start_date: range.start_date, end_date: range.end_date });
  });
}
