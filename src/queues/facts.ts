/**
 * The fact kinds that travel through BullMQ into ClickHouse: one queue each.
 * A job carries a batch of rows ready for the kind's ClickHouse table.
 */
export const FACT_KINDS = ['clicks', 'installs', 'ledger', 'placements', 'placement_metrics', 'creators'] as const;
export type FactKind = (typeof FACT_KINDS)[number];

export type FactRow = Record<string, unknown>;

/** A row type per kind: the queues are typed by the service's map (src/facts.ts), so a kind takes only its rows. */
export type RowsByKind = Record<FactKind, FactRow>;

export type FactJobData<Row extends FactRow = FactRow> = {
  rows: Row[];
  /** Epoch ms when the API accepted the rows; the worker measures ingestion lag from it. */
  acceptedAt: number;
  /** Set on rows re-enqueued from an outbox: they may already be in ClickHouse. */
  replay?: boolean;
};
