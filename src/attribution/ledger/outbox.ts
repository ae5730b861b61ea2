import { sql } from 'kysely';
import type { Logger } from '../../logger';
import type { FactRow } from '../../queues/facts';
import type { FactQueues } from '../../queues/queues';

/** The fact kinds whose rows are accepted in Postgres and wait in `fact_outbox` until ClickHouse has them. */
export type OutboxKind = 'installs' | 'ledger';

/**
 * The CTE that makes the statement's new rows (the CTE `recorded`: id, recorded_at)
 * pending facts of `kind`: committed with the rows themselves, so an accepted row is
 * always either in ClickHouse or in the outbox (migrations/0007).
 */
export const pendingFacts = (kind: OutboxKind) => () =>
  sql<{ id: string }>`(INSERT INTO fact_outbox (kind, id, recorded_at) SELECT ${sql.lit(kind)}, id, recorded_at FROM recorded RETURNING id)`;

/**
 * Queues, in the background, the ClickHouse fact of a row just accepted (installs,
 * ledger_events) and pending in the outbox. The Postgres row is what makes the request
 * accepted, so the answer does not wait for Redis, and a Redis failure is logged, not
 * answered: the outbox sweeper sends the row later. Graceful shutdown still flushes these adds (FactQueues.drain).
 */
export function queueOutboxFact(queues: FactQueues, log: Logger, kind: OutboxKind, fact: FactRow): void {
  queues.add(kind, [fact]).catch((err) => {
    log.warn({ err, kind, id: fact.id }, 'could not queue an accepted fact; the outbox sweeper will send it');
  });
}
