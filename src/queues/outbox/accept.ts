import { type RawBuilder, sql } from 'kysely';
import { Batcher, sortByKey } from '../../db/batcher';
import type { Db } from '../../db/database';
import { recordsetInsert } from '../../db/recordset';
import type { Logger } from '../../logger';
import type { FactKind, RowsByKind } from '../facts';
import type { FactQueues } from '../queues';
import { RepeatedLog } from '../../repeated-log';

/**
 * The fact kinds whose rows are accepted in Postgres and wait in `fact_outbox` until
 * ClickHouse has them (migrations/0007): accepted here, confirmed by their writer
 * (workers/writers.ts), sent again by the sweeper (./sweeper.ts).
 */
export const OUTBOX_KINDS = ['installs', 'ledger', 'creators'] as const satisfies readonly FactKind[];
export type OutboxKind = (typeof OUTBOX_KINDS)[number];

/**
 * The CTE body that makes the rows of the CTE `recorded` pending in the outbox, to run in
 * the statement that inserts them: a row is then always either in ClickHouse or in the outbox.
 */
export const markPending = (kind: OutboxKind, recordedAt: string) =>
  sql`(INSERT INTO fact_outbox (kind, id, recorded_at) SELECT ${sql.lit(kind)}, id, ${sql.ref(recordedAt)} FROM recorded)`;

type AcceptedTable<Row> = {
  table: 'installs' | 'ledger_events';
  kind: OutboxKind;
  /** The columns a new row is inserted with. */
  columns: readonly (keyof Row & string)[];
  /** The unique key that decides `duplicate`. */
  key: readonly (keyof Row & string)[];
  /** What the caller needs back of a new row besides `recorded_at`: only what Postgres fills or rewrites (reading rows back costs more than writing them). */
  returning: readonly string[];
  /** A CTE body run over the new rows (`recorded`) in the same statement, with the columns it reads of them (e.g. counting credited codes). */
  alongside?: { reads: readonly string[]; cte: RawBuilder<unknown> };
  /** The query inserted, from the batch's rows (a SELECT of `columns`): default the rows as given. */
  select?: (rows: RawBuilder<Row>) => RawBuilder<unknown>;
};

/**
 * Accepts rows of an outbox table once per unique key, in one statement shared by concurrent
 * requests: `INSERT … ON CONFLICT DO NOTHING RETURNING` decides `duplicate` and makes each new fact
 * pending in `fact_outbox`; rows sorted by key, so statements never deadlock (docs/ingestion.md).
 */
export class AcceptedRows<Row extends { id: string }, Filled extends { recorded_at: Date }> {
  private readonly inserts: Batcher<Row, Filled | undefined>;

  constructor(db: Db, spec: AcceptedTable<Row>) {
    const refs = (columns: readonly string[]) => sql.join(columns.map((column) => sql.ref(column)));
    const filled = refs(['recorded_at', ...spec.returning]);
    const recorded = refs(['id', ...(spec.alongside?.reads ?? []), 'recorded_at', ...spec.returning]);
    const statement = recordsetInsert<Row, Filled & { id: string }>(
      db,
      spec.table,
      spec.columns,
      (rows) => sql`
        WITH recorded AS (
          INSERT INTO ${sql.table(spec.table)} (${refs(spec.columns)}) ${spec.select ? spec.select(rows) : rows}
          ON CONFLICT (${refs(spec.key)}) DO NOTHING
          RETURNING ${recorded}
        ),
        ${spec.alongside ? sql`alongside AS ${spec.alongside.cte},` : sql``}
        pending AS ${markPending(spec.kind, 'recorded_at')}
        SELECT id, ${filled} FROM recorded`,
    );
    // One statement in flight (Batcher's default): the next batch gathers while it runs, so under
    // load batches grow rather than statements multiplying (14-17 % less CPU a request than four: docs/benchmarks.md).
    this.inserts = new Batcher(
      async (batch: Row[]) => {
        const recorded = await statement(sortByKey(batch, (row) => spec.key.map((column) => String(row[column]))));
        const byId = new Map<string, Filled>(recorded.map((filled) => [filled.id, filled]));
        return batch.map((row) => byId.get(row.id));
      },
    );
  }

  /** What Postgres filled in for a new row (`recorded_at` and `returning`); undefined for a duplicate (also when the same key came twice in one batch). */
  insert(row: Row): Promise<Filled | undefined> {
    return this.inserts.call(row);
  }
}

/**
 * Queues in the background the fact of a row just accepted: the Postgres row is the acceptance,
 * so the answer never waits for Redis, and a Redis failure is logged and left to the sweeper.
 * Shutdown still flushes these adds (FactQueues.drain).
 */
export function queueOutboxFact<Rows extends RowsByKind, K extends OutboxKind>(
  queues: FactQueues<Rows>,
  log: Logger,
  kind: K,
  fact: Rows[K],
): void {
  queues.add(kind, [fact]).catch((err) => {
    unqueuedLog(log).report({ err, kind });
  });
}

// While Redis is away every accepted row fails its add: one line a second per logger, with the count.
const unqueued = new WeakMap<Logger, RepeatedLog>();
function unqueuedLog(log: Logger): RepeatedLog {
  let repeated = unqueued.get(log);
  if (!repeated) {
    repeated = new RepeatedLog(log, 'warn', 'could not queue accepted facts; the outbox sweeper will send them', { countField: 'facts' });
    unqueued.set(log, repeated);
  }
  return repeated;
}
