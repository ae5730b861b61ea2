import type { FactWriter } from './batch-worker';
import { confirmWarehoused } from './outbox-sweeper';
import { deriveAfterInsert } from './placement-derive';

/** One writer per fact kind: which ClickHouse table its queue fills. */
export const FACT_WRITERS: FactWriter[] = [
  // The Data API's derived tables follow every placement and snapshot batch.
  { kind: 'placements', table: 'placements', afterInsert: deriveAfterInsert },
  { kind: 'placement_metrics', table: 'placement_snapshots', afterInsert: deriveAfterInsert },
  // Attribution facts are never counted twice: replayed rows are checked by id.
  { kind: 'clicks', table: 'clicks', idColumn: 'click_token' },
  // Installs and ledger rows wait in the Postgres outbox: once ClickHouse has them, they leave it.
  {
    kind: 'installs',
    table: 'installs',
    idColumn: 'id',
    afterInsert: (rows, { db }) => confirmWarehoused(db, 'installs', rows.map((r) => String(r.id))),
  },
  {
    kind: 'ledger',
    table: 'ledger',
    idColumn: 'id',
    afterInsert: (rows, { db }) => confirmWarehoused(db, 'ledger', rows.map((r) => String(r.id))),
  },
];
