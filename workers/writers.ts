import { installFact } from '../src/attribution/installs/fact';
import { ledgerFact } from '../src/attribution/ledger/fact';
import { creatorFact } from '../src/placements/facts';
import { brandsOfPlacements, derivePlacements } from '../src/placements/derive';
import type { FactRows } from '../src/facts';
import type { FactKind } from '../src/queues/facts';
import type { Outbox } from '../src/queues/outbox/sweeper';
import { type FactWriter, outboxOf, type WriterContext } from './write';

/** A writer of one kind, typed by its rows (src/facts.ts). */
const writer = <K extends FactKind>(w: FactWriter<FactRows[K]> & { kind: K }): FactWriter => w;

const derive = (rows: { placement_id: string }[], { warehouse }: WriterContext) => derivePlacements(warehouse, rows.map((r) => r.placement_id));

/** The read pipeline's answers follow the brands of a batch (src/reads/changes.ts). */
const brandsOfRows = (rows: { brand_id: string }[]) => rows.map((r) => r.brand_id);
const placementsLand = { area: 'placements', brands: brandsOfRows } as const;
const attributionLands = { area: 'attribution', brands: brandsOfRows } as const;

/** Attributed installs and ledger rows become webhook deliveries before their outbox confirmation (docs/webhooks.md). */
const webhookEvents = (kind: 'installs' | 'ledger') => (rows: { id: string; brand_id: string }[], ctx: WriterContext) => ctx.webhooks?.facts(kind, rows).then(() => undefined) ?? Promise.resolve();

/** One writer per fact kind: which ClickHouse table its queue fills. */
export const FACT_WRITERS: FactWriter[] = [
  // The Data API's derived tables follow every placement and snapshot batch.
  writer({ kind: 'placements', table: 'placements', afterInsert: derive, lands: placementsLand }),
  writer({
    kind: 'placement_metrics',
    table: 'placement_snapshots',
    afterInsert: derive,
    lands: { area: 'placements', brands: (rows, { warehouse }) => brandsOfPlacements(warehouse, rows.map((r) => r.placement_id)) },
  }),
  // Attribution facts are never counted twice: replayed rows are checked by id.
  writer({ kind: 'clicks', table: 'clicks', idColumn: 'click_token', timeColumn: 'clicked_at', lands: attributionLands }),
  // Rows accepted in Postgres wait in the outbox (src/queues/outbox/) until ClickHouse has them.
  writer({ kind: 'installs', table: 'installs', idColumn: 'id', timeColumn: 'occurred_at', outbox: { source: 'installs', fact: installFact }, fanOut: webhookEvents('installs'), lands: attributionLands }),
  writer({ kind: 'ledger', table: 'ledger', idColumn: 'id', timeColumn: 'occurred_at', outbox: { source: 'ledger_events', fact: ledgerFact }, fanOut: webhookEvents('ledger'), lands: attributionLands }),
  // Creators are shared: their names may show in any brand's answers.
  writer({
    kind: 'creators',
    table: 'creators',
    idColumn: 'creator_id',
    outbox: { source: 'creators', fact: creatorFact },
    lands: { area: 'placements', brands: () => 'every brand' },
  }),
];

/** The outboxes the sweeper repairs: those of the writers above. */
export const OUTBOXES: Outbox[] = FACT_WRITERS.flatMap((w) => outboxOf(w) ?? []);
