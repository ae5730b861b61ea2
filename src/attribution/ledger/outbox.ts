import type { Logger } from '../../logger';
import type { FactKind, FactRow } from '../../queues/facts';
import type { FactQueues } from '../../queues/queues';

/**
 * Queues, in the background, the ClickHouse fact of a row just written to an outbox table
 * (installs, ledger_events). The Postgres row is what makes the request accepted, so the
 * answer does not wait for Redis, and a Redis failure is logged, not answered: the outbox
 * sweeper sends the row later. Graceful shutdown still flushes these adds (FactQueues.drain).
 */
export function queueOutboxFact(queues: FactQueues, log: Logger, kind: FactKind, fact: FactRow): void {
  queues.add(kind, [fact]).catch((err) => {
    log.warn({ err, kind, id: fact.id }, 'could not queue an accepted fact; the outbox sweeper will send it');
  });
}
