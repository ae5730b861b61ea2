import { type RawBuilder, sql } from 'kysely';

/**
 * Many rows as one JSON parameter, read back as the table's own row type
 * (`json_populate_recordset`): a batched INSERT then has the same short SQL text and a
 * single parameter whatever its size. JSON.stringify is native, where pg would escape every
 * value of per-column parameters in JavaScript; Postgres parses the JSON in C. `columns`
 * are the insert's column list, in order.
 */
export function recordsetRows<Row>(table: string, columns: readonly string[], rows: Row[]): RawBuilder<Row> {
  const selected = sql.join(columns.map((column) => sql.ref(column)));
  return sql<Row>`SELECT ${selected} FROM json_populate_recordset(NULL::${sql.table(table)}, ${JSON.stringify(rows)}::json)`;
}

/** The column list of an insert, from a record that names each column once (the type checks none is missing). */
export const columnList = <T extends Record<string, true>>(columns: T) => Object.keys(columns) as (keyof T & string)[];
