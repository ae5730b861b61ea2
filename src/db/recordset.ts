import { createHash } from 'node:crypto';
import { type RawBuilder, sql } from 'kysely';
import { type Db, executePrepared } from './database';

/**
 * Inserts many rows as one JSON parameter (`json_populate_recordset`), compiled once and prepared
 * once per connection, so a batch costs little beyond its round trip. `build` gets the rows as a
 * SELECT of `columns` and answers the whole statement; it binds no parameter of its own.
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
