import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Pagination } from '../attribution/reporting/paging';
import { type AnswerCache, questionOf, sendJsonText } from '../http/answer-cache';
import { type Route, route } from '../http/route';
import type { Warehouse } from '../warehouse/clickhouse';
import { type DateRange, portalRange, type RangeParams } from './range';
import { answer, dateRange, pagination, readErrors } from './schemas';

type Page = { data: unknown[]; pagination: Pagination };

/** What a portal read uses: the warehouse, and the answers cached per brand until its facts land. */
export type PortalReads = { warehouse: Warehouse; answers: AnswerCache };

/**
 * A portal read of the session's brand, cached as JSON text per question (its path, parsed
 * query and today) until the brand's attribution facts land or a record it names changes.
 */
export async function cachedRead(answers: AnswerCache, brandId: string, req: FastifyRequest, reply: FastifyReply, query: unknown, read: () => Promise<unknown>) {
  const question = questionOf(req.routeOptions.url ?? '', query);
  const text = await answers.answer('attribution', brandId, question, async () => JSON.stringify(await read()));
  return sendJsonText(reply, text);
}

/**
 * GET of a paged list of the session's brand (CONTRACT 8): one handler for every portal list.
 * A list over time resolves its range first (default 30d) and answers it with the page.
 */
export function listRoute<Q extends z.ZodObject>(
  { warehouse, answers }: PortalReads,
  list: {
    path: string;
    summary: string;
    query: Q;
    item: z.ZodType;
    /** A list of records alone (Postgres) is read each time: facts landing would drop its cached answer for nothing. */
    uncached?: true;
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
    handler({ query, req, reply }, session) {
      const brandId = session.brandId;
      const q = query as z.output<Q>;
      const read = async () => {
        if (!ranged) return answer(answered, await list.read(brandId, q, undefined));
        const range = await portalRange(warehouse, brandId, q as RangeParams);
        const { data, pagination } = await list.read(brandId, q, range);
        return answer(answered, { data, pagination, start_date: range.start_date, end_date: range.end_date });
      };
      return list.uncached ? read() : cachedRead(answers, brandId, req, reply, query, read);
    },
  });
}
