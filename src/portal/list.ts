import { z } from 'zod';
import type { Pagination } from '../attribution/reporting/paging';
import { type Route, route } from '../http/route';
import type { FactArea } from '../reads/changes';
import { type Reads, sendJsonText } from '../reads/pipeline';
import type { Warehouse } from '../warehouse/clickhouse';
import { type DateRange, portalRange, type RangeParams } from './range';
import { answer, dateRange, pagination, readErrors } from './schemas';

type Page = { data: unknown[]; pagination: Pagination };

/** What a portal read uses: the warehouse, and the read pipeline (src/reads/pipeline.ts). */
export type PortalReads = { warehouse: Warehouse; reads: Reads };

/**
 * GET of a paged list of the session's brand (docs/api.md#endpoints-apiclientattribution): one handler for every portal list, a
 * read of the pipeline. Its scope is the range of a list over time (default 30d), answered with the page.
 */
export function listRoute<Q extends z.ZodObject>(
  { warehouse, reads }: PortalReads,
  list: {
    path: string;
    summary: string;
    query: Q;
    item: z.ZodType;
    /**
     * The facts the answer counts (besides the brand's records); null for a list of records alone
     * (Postgres), read each time: facts landing would drop its kept answer for nothing.
     */
    reads: FactArea | null;
    /** Reads a page; `range` only for a list over time (its query extends rangeParams). */
    read(brandId: string, query: z.output<Q>, range: DateRange | undefined): Promise<Page>;
  },
): Route {
  const ranged = 'period' in list.query.shape;
  const answered = z.object({ data: z.array(list.item), pagination, ...(ranged ? dateRange : {}) });
  return route({
    method: 'GET',
    auth: 'session',
    path: list.path,
    summary: list.summary,
    query: list.query as z.ZodObject,
    responses: { 200: answered, ...readErrors },
    async handler({ query, req, reply }, session) {
      const brandId = session.brandId;
      const q = query as z.output<Q>;
      const scope = async () => (ranged ? portalRange(warehouse, brandId, q as RangeParams) : undefined);
      const page = async (range: DateRange | undefined) => {
        if (!range) return answer(answered, await list.read(brandId, q, undefined));
        const { data, pagination } = await list.read(brandId, q, range);
        return answer(answered, { data, pagination, start_date: range.start_date, end_date: range.end_date });
      };
      if (list.reads === null) return page(await scope());
      const path = req.routeOptions.url ?? list.path;
      const text = await reads.answer({ brandId, reads: list.reads, path, query, scope, answer: async (range) => JSON.stringify(await page(range)) });
      return sendJsonText(reply, text);
    },
  });
}
