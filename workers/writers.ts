import type { FactWriter } from './batch-worker';

/** One writer per fact kind: which ClickHouse table its queue fills. */
export const FACT_WRITERS: FactWriter[] = [
  { kind: 'placements', table: 'placements' },
  { kind: 'placement_metrics', table: 'placement_snapshots' },
];
