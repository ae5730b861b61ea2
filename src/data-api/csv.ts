import { pipeline, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { FastifyReply } from 'fastify';

export type CsvBody = {
  filename: string;
  columns: readonly string[];
  /** One array per data row, in column order; null and undefined become empty cells. */
  records: Iterable<unknown[]> | AsyncIterable<unknown[]>;
};

/**
 * Streams a CSV answer: records flow through csv-stringify as they arrive, so nothing
 * holds the whole file. Cells with commas, quotes or line breaks are quoted and inner
 * quotes doubled. A failure half-way can only cut the body short (the status is sent).
 */
export function sendCsv(reply: FastifyReply, body: CsvBody) {
  const csv = stringify({ header: true, columns: [...body.columns] });
  pipeline(Readable.from(body.records), csv, (err) => {
    if (err) reply.log.error({ err }, 'CSV stream failed');
  });
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${body.filename}"`)
    .send(csv);
}
