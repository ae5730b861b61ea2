import { type RawBuilder, sql } from 'kysely';

/**
 * Many rows as one `SELECT * FROM unnest(...)`: one array parameter per column instead of
 * one parameter per value, so a batched INSERT has the same short SQL text whatever its
 * size (Postgres plans it once; building and sending it costs little). `types` gives each
 * column's Postgres type, in the order of the insert's column list.
 */
export function unnestRows<Row extends Record<string, unknown>>(types: { [C in keyof Row & string]?: string }, rows: Row[]): RawBuilder<Row> {
  const arrays = Object.entries(types).map(([column, type]) => sql`${rows.map((row) => row[column] ?? null)}::${sql.raw(`${type}[]`)}`);
  return sql<Row>`SELECT * FROM unnest(${sql.join(arrays)})`;
}

/** The columns named in `types`, in order: the insert's column list for unnestRows. */
export const unnestColumns = <T extends Record<string, string | undefined>>(types: T) => Object.keys(types) as (keyof T & string)[];
