import { createHash } from 'node:crypto';
import { type RawBuilder, sql } from 'kysely';
import { type Db, executePrepared } from './database';

/**
 * Batched inserts of many rows as one JSON parameter, read back as the table's own row
 * type (`json_populate_recordset`). The statement is built and compiled once, and prepared
 * once per connection; each batch only sends its rows. JSON.stringify is native, where
 * per-value parameters would be escaped one by one in JavaScript, and Postgres parses the
 * JSON in C, so a batch costs little beyond its round trip whatever its size.
 *
 * `build` receives the rows as a SELECT of `columns` (the insert's column list, in order)
 * and answers the whole statement as SQL; it must bind no parameter of its own.
 */
export function recordsetInsert<Row, Result>(
  db: Db,
  table: string,
  columns: readonly string[],
  build: (rows: RawBuilder<Row>) => RawBuilder<Result>,
): (rows: Row[]) => Promise<Result[]> {
  const selected = sql.join(columns.map((column) => sql.ref(column)));
  const statement = build(sql<Row>`SELECT ${selected} FROM json_populate_recordset(NULL::${sql.table(table)}, ${'[]'}::json)`).compile(db);
  if (statement.parameters.length !== 1) throw new Error(`recordsetInsert(${table}): the statement binds parameters of its own`);
  const name = `recordset_${createHash('sha256').update(statement.sql).digest('hex').slice(0, 16)}`;
  return (rows) => executePrepared<Result>(db, name, statement.sql, [JSON.stringify(rows)]);
}

/** The column list of an insert, from a record that names each column once (the type checks none is missing). */
export const columnList = <T extends Record<string, true>>(columns: T) => Object.keys(columns) as (keyof T & string)[];
