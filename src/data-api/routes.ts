import type { z } from 'zod';
import { schemaRef } from '../http/openapi';
import { type Route, route } from '../http/route';
import type { FactArea } from '../reads/changes';
import { sendJsonText } from '../reads/pipeline';
import { decodeCursor, encodeCursor } from './cursor';
import { type CsvBody, sendCsv } from './csv';
import {
  type CommonQuery,
  commonQuery,
  creatorsQuery,
  dailyQuery,
  postsCsvQuery,
  postsQuery,
} from './params';
import type { DataContext } from './request';
import {
  brandSchema,
  creatorCsvRecord,
  creatorSchema,
  csvColumns,
  cursorPaginationSchema,
  dailyCsvRecord,
  dailyRowSchema,
  dailyRows,
  envelope,
  errorSchemas,
  type Meta,
  metaOf,
  metaSchema,
  pagePaginationSchema,
  pagedEnvelope,
  postCsvRecord,
  postSchema,
  summarySchema,
  toCreator,
  toPost,
} from './resources';
import type { AnswerRange, DataRequest } from './scope';

/**
 * The Data API endpoints (docs/api.md#data-api), each as: path, query schema, answer, handler.
 * index.ts serves them behind the API key; openapi.ts describes them from the same schemas.
 */

type QuerySchema = z.ZodObject & z.ZodType<CommonQuery>;
type JsonAnswer = { data: unknown; pagination?: unknown };

/** The named schemas of the document's components: the answers' parts and each JSON answer. */
export const components: [string, z.ZodType][] = [
  ['Brand', brandSchema],
  ['Summary', summarySchema],
  ['DailyRow', dailyRowSchema],
  ['Post', postSchema],
  ['Creator', creatorSchema],
  ['Meta', metaSchema],
  ['CursorPagination', cursorPaginationSchema],
  ['PagePagination', pagePaginationSchema],
  ['InvalidParameter', errorSchemas.invalidParameter],
  ['Unauthorized', errorSchemas.unauthorized],
];

const errorResponses = {
  400: {
    description: 'A parameter is invalid; `param` names it',
    content: { 'application/json': { schema: schemaRef('InvalidParameter') } },
  },
  401: {
    description: 'The API key is missing, unknown or revoked',
    content: { 'application/json': { schema: schemaRef('Unauthorized') } },
  },
};

/** What every Data API endpoint is, JSON or CSV: a GET with the brand's API key, under the Data API's rate limit. */
const dataEndpoint = (e: { path: string; summary: string; query: QuerySchema }) => ({
  method: 'GET' as const,
  auth: 'api_key' as const,
  limits: ['data_api' as const],
  path: e.path,
  operationId: e.path.replace(/^\//, '').replace(/[/.]/g, '_'),
  summary: e.summary,
  query: e.query,
});

/**
 * An answer as JSON text cut just before the value of `meta.generated_at` (which stringify puts
 * last): cached once, and each request that sends it adds its own time (stamped).
 */
const STAMP_END = '"generated_at":""}}';
const stampable = (answer: { data: unknown; pagination?: unknown; meta: Meta }) => {
  const text = JSON.stringify({ ...answer, meta: { ...answer.meta, generated_at: '' } });
  // A reordered envelope would cache broken JSON for every client: refuse it here instead.
  if (!text.endsWith(STAMP_END)) throw new Error('meta.generated_at must be the last field of the answer');
  return text.slice(0, -'"}}'.length);
};
const stamped = (cut: string) => `${cut}${new Date().toISOString()}"}}`;

/**
 * A JSON endpoint: a read of the pipeline (src/reads/pipeline.ts), its answer enveloped with the
 * request's meta (docs/api.md#answers) and kept until the brand's records or the facts it `reads` change.
 */
const json = <S extends QuerySchema>(e: {
  path: string;
  summary: string;
  query: S;
  /** The facts the answer counts (besides the brand's records). */
  reads: FactArea;
  /** The answer is a row per day of its range (see DataReader.scope). */
  perDay?: boolean;
  response: { name: string; schema: z.ZodType };
  handle(r: DataRequest<z.output<S>>): Promise<JsonAnswer>;
}): Route<DataContext> => {
  components.push([e.response.name, e.response.schema]);
  return route({
    ...dataEndpoint(e),
    responses: { 200: { description: 'OK', content: { 'application/json': { schema: schemaRef(e.response.name) } } }, ...errorResponses },
    async handler({ query, reply }, { brandId, reader }: DataContext) {
      const { api_key: _, ...asked } = query as CommonQuery;
      const answered = await reader.reads.answer({
        brandId,
        reads: e.reads,
        path: e.path,
        query: asked,
        scope: () => reader.scope(brandId, query as z.output<S>, { perDay: e.perDay }),
        async answer(r) {
          const { data, pagination } = await e.handle(r);
          return stampable({ data, pagination, meta: metaOf(r.brand, r.scope, await r.range()) });
        },
      });
      return sendJsonText(reply, stamped(answered));
    },
  });
};

/** A CSV endpoint: the read's scope, then a header row and records streamed as they are read (never kept). */
const csv = <S extends QuerySchema>(e: {
  path: string;
  summary: string;
  query: S;
  /** The answer is a row per day of its range (see DataReader.scope). */
  perDay?: boolean;
  handle(r: DataRequest<z.output<S>>): Promise<CsvBody>;
}): Route<DataContext> =>
  route({
    ...dataEndpoint(e),
    responses: {
      200: {
        description: 'CSV with a header row naming the columns; null values are empty cells',
        headers: { 'Content-Disposition': { schema: { type: 'string' }, description: 'attachment; filename=...' } },
        content: { 'text/csv': { schema: { type: 'string' } } },
      },
      ...errorResponses,
    },
    async handler({ query, reply }, { brandId, reader }: DataContext) {
      return sendCsv(reply, await e.handle(await reader.scope(brandId, query as z.output<S>, { perDay: e.perDay })));
    },
  });

/** posts.csv stops after this many placements. */
const MAX_CSV_POSTS = 50_000;
/** creators.csv stops after this many creators (the most viewed). */
const MAX_CSV_CREATORS = 100_000;

const fileName = (name: string, range: AnswerRange) => `${name}_${range.start}_${range.end}.csv`;

async function* mapRows<T>(rows: AsyncIterable<T>, record: (row: T) => unknown[]): AsyncIterable<unknown[]> {
  for await (const row of rows) yield record(row);
}

export const endpoints: Route<DataContext>[] = [
  json({
    path: '/brand',
    reads: 'placements',
    summary: 'The brand, its default platforms and its visible campaigns',
    query: commonQuery,
    response: { name: 'BrandResponse', schema: envelope(brandSchema) },
    async handle(r) {
      const data = { ...r.brand, campaigns: r.campaigns, metrics_since: await r.metricsSince() };
      return { data };
    },
  }),

  json({
    path: '/metrics/summary',
    reads: 'placements',
    summary: 'Totals of the placements counted in the range',
    query: commonQuery,
    response: { name: 'SummaryResponse', schema: envelope(summarySchema) },
    async handle(r) {
      const s = await r.queries.summary(r.scope);
      const { posts, views, likes, comments, shares, engagement_rate, creators } = s;
      return { data: { posts, views, likes, comments, shares, engagement_rate, creators } };
    },
  }),

  json({
    path: '/metrics/daily',
    reads: 'placements',
    perDay: true,
    summary: 'One row per day of the range',
    query: dailyQuery,
    response: { name: 'DailyResponse', schema: envelope(dailyRowSchema.array()) },
    async handle(r) {
      const [totals, range] = await Promise.all([r.queries.daily(r.scope), r.range()]);
      return { data: dailyRows(totals, range, r.query.view_type === 'cumulative') };
    },
  }),

  json({
    path: '/posts',
    reads: 'placements',
    summary: 'Placements, a page at a time (follow pagination.next_cursor while has_more)',
    query: postsQuery,
    response: { name: 'PostsResponse', schema: pagedEnvelope(postSchema.array(), cursorPaginationSchema) },
    async handle(r) {
      const { sort, limit, cursor } = r.query;
      const after = cursor === undefined ? undefined : decodeCursor(cursor, sort);
      const rows = await r.queries.posts(r.scope, sort, limit + 1, after);
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const hasMore = rows.length > limit && last !== undefined;
      return {
        data: page.map((row) => toPost(row, r.campaignNames)),
        pagination: {
          next_cursor: hasMore ? encodeCursor(sort, { key: last.sort_key, id: last.placement_id }) : null,
          has_more: hasMore,
        },
      };
    },
  }),

  json({
    path: '/creators',
    reads: 'placements',
    summary: 'Creators by views, then name, a page at a time',
    query: creatorsQuery,
    response: { name: 'CreatorsResponse', schema: pagedEnvelope(creatorSchema.array(), pagePaginationSchema) },
    async handle(r) {
      const { page, limit } = r.query;
      const { rows, total } = await r.queries.creators(r.scope, page, limit);
      const totalPages = Math.ceil(total / limit);
      return {
        data: rows.map(toCreator),
        pagination: { page, page_size: limit, total, total_pages: totalPages, has_more: page < totalPages },
      };
    },
  }),

  csv({
    path: '/metrics/daily.csv',
    perDay: true,
    summary: 'The daily rows as CSV',
    query: dailyQuery,
    async handle(r) {
      const [totals, range] = await Promise.all([r.queries.daily(r.scope), r.range()]);
      const rows = dailyRows(totals, range, r.query.view_type === 'cumulative');
      return { filename: fileName('daily', range), columns: csvColumns.daily, records: rows.map(dailyCsvRecord) };
    },
  }),

  csv({
    path: '/posts.csv',
    summary: `Placements as CSV, up to ${MAX_CSV_POSTS.toLocaleString('en')}`,
    query: postsCsvQuery,
    async handle(r) {
      const [rows, range] = await Promise.all([r.queries.postsStream(r.scope, r.query.sort, MAX_CSV_POSTS), r.range()]);
      return {
        filename: fileName('posts', range),
        columns: csvColumns.posts,
        records: mapRows(rows, (row) => postCsvRecord(toPost(row, r.campaignNames))),
      };
    },
  }),

  csv({
    path: '/creators.csv',
    summary: 'Creators as CSV, by views then name',
    query: commonQuery,
    async handle(r) {
      const [rows, range] = await Promise.all([r.queries.creatorsStream(r.scope, MAX_CSV_CREATORS), r.range()]);
      return {
        filename: fileName('creators', range),
        columns: csvColumns.creators,
        records: mapRows(rows, (row) => creatorCsvRecord(toCreator(row))),
      };
    },
  }),
];
