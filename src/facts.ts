import type { ClickFact } from './attribution/clicks/fact';
import type { InstallFact } from './attribution/installs/fact';
import type { LedgerFact } from './attribution/ledger/fact';
import type { CreatorFact, PlacementFact, SnapshotFact } from './placements/facts';
import type { FactQueues } from './queues/queues';

/** Each fact kind's row: what its fact function builds, what its queue takes and its writer inserts. */
export type FactRows = {
  clicks: ClickFact;
  installs: InstallFact;
  ledger: LedgerFact;
  placements: PlacementFact;
  placement_metrics: SnapshotFact;
  creators: CreatorFact;
};

/** The service's fact queues: `add('clicks', rows)` takes click rows only. */
export type Queues = FactQueues<FactRows>;
