import { sql } from 'kysely';
import type { Db } from '../../db/database';
import { recordsetInsert } from '../../db/recordset';
import type { Logger } from '../../logger';
import type { FactRow } from '../../queues/facts';
import type { FactQueues } from '../../queues/queues';
import { Batcher, sortByKey } from '../../db/batcher';
import { countCodeCredits } from './credit';

/** The fact kinds whose rows are accepted in Postgres and wait in `fact_outbox` until ClickHouse has them. */
export type OutboxKind = 'installs' | 'ledger';

type AcceptedTable<Row> = {
  table: 'installs' | 'ledger_events';
  kind: OutboxKind;
  /** The columns a new row is inserted with. */
  columns: readonly (keyof Row & string)[];
  /** The unique key that decides `duplicate`. */
  key: readonly (keyof Row & string)[];
  /** What the caller needs back of a new row besides `recorded_at`: only what Postgres fills or rewrites (reading rows back costs more than writing them). */
  returning: readonly string[];
};

/**
 * Accepts rows of an outbox table (installs, ledger_events) once per unique key. One
 * statement, committed as a whole: `INSERT … ON CONFLICT DO NOTHING RETURNING` decides
 * `duplicate` (concurrent identical requests record once), credited codes are counted
 * (countCodeCredits), and each new row's fact becomes pending in `fact_outbox`, so an
 * accepted row is always either in ClickHouse or in the outbox (migrations/0007).
 *
 * Concurrent requests share one statement (Batcher), sent as a prepared statement with
 * the rows as one JSON parameter (recordsetInsert); rows are sorted by key so concurrent
 * statements of several processes take their locks in one order and cannot deadlock.
 */
export class AcceptedRows<Row extends { id: string }, Filled extends { recorded_at: Date }> {
  private readonly inserts: Batcher<Row, Filled | undefined>;

  constructor(db: Db, spec: AcceptedTable<Row>) {
    const refs = (columns: readonly string[]) => sql.join(columns.map((column) => sql.ref(column)));
    const filled = refs(['recorded_at', ...spec.returning]);
    const statement = recordsetInsert<Row, Filled & { id: string }>(
      db,
      spec.table,
      spec.columns,
      (rows) => sql`
        WITH recorded AS (
          INSERT INTO ${sql.table(spec.table)} (${refs(spec.columns)}) ${rows}
          ON CONFLICT (${refs(spec.key)}) DO NOTHING
          RETURNING id, code_id, ${filled}
        ),
        code_counts AS ${countCodeCredits()},
        pending AS (INSERT INTO fact_outbox (kind, id, recorded_at) SELECT ${sql.lit(spec.kind)}, id, recorded_at FROM recorded)
        SELECT id, ${filled} FROM recorded`,
    );
    this.inserts = new Batcher(
      async (batch: Row[]) => {
        const recorded = await statement(sortByKey(batch, (row) => spec.key.map((column) => String(row[column]))));
        const byId = new Map<string, Filled>(recorded.map((filled) => [filled.id, filled]));
        return batch.map((row) => byId.get(row.id));
      },
      { maxRunning: 4 },
    );
  }

  /** What Postgres filled in for a new row (`recorded_at` and `returning`); undefined for a duplicate (also when the same key came twice in one batch). */
  insert(row: Row): Promise<Filled | undefined> {
    return this.inserts.call(row);
  }
}

/**
 * Queues, in the background, the ClickHouse fact of a row just accepted (installs,
 * ledger_events) and pending in the outbox. The Postgres row is what makes the request
 * accepted, so the answer does not wait for Redis, and a Redis failure is logged, not
 * answered: the outbox sweeper sends the row later. Graceful shutdown still flushes these
 * adds (FactQueues.drain).
 */
export function queueOutboxFact(queues: FactQueues, log: Logger, kind: OutboxKind, fact: FactRow): void {
  queues.add(kind, [fact]).catch((err) => {
    log.warn({ err, kind, id: fact.id }, 'could not queue an accepted fact; the outbox sweeper will send it');
  });
}
