import { pipeline, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { FastifyReply } from 'fastify';

export type CsvBody = {
  filename: string;
  columns: readonly string[];
  /** One array per data row, in column order; null and undefined become empty cells, arrays and objects quoted JSON. */
  records: Iterable<unknown[]> | AsyncIterable<unknown[]>;
};

/** What a spreadsheet reads as the start of a formula (or, tab and CR, of a cell it re-parses). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * CSV formula injection (docs/hardening.md#csv-exports-formula-injection): a text cell a spreadsheet would run is written with a
 * leading `'`. Only string cells pass here (csv-stringify's cast by type): numbers are written
 * from numbers, so a negative count stays a number, and dates are ISO text starting with a digit.
 */
export const neutraliseFormula = (text: string): string => (FORMULA_START.test(text) ? `'${text}` : text);

/** An array or object cell (creators' handles and platforms) is JSON text, always quoted, `[]` too. */
const jsonCell = (value: object) => ({ value: JSON.stringify(value), quoted: true });

/**
 * Streams a CSV answer: records flow through csv-stringify as they arrive, so nothing
 * holds the whole file. Cells with commas, quotes or line breaks are quoted and inner
 * quotes doubled. A failure half-way can only cut the body short (the status is sent).
 */
export function sendCsv(reply: FastifyReply, body: CsvBody) {
  const csv = stringify({ header: true, columns: [...body.columns], cast: { string: neutraliseFormula, object: jsonCell } });
  pipeline(Readable.from(body.records), csv, (err) => {
    if (err) reply.log.error({ err }, 'CSV stream failed');
  });
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${body.filename}"`)
    .send(csv);
}
