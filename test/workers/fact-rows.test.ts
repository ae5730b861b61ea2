import { describe, expect, it } from 'vitest';
import { creatorFact, placementFact, snapshotFact } from '../../src/placements/facts';
import type { Queues } from '../../src/facts';
import { FACT_KINDS } from '../../src/queues/facts';
import { outboxOf } from '../../workers/write';
import { FACT_WRITERS, OUTBOXES } from '../../workers/writers';

describe('fact kinds and their writers', () => {
  it('a queue takes only its own kind of rows (checked by tsc --noEmit)', () => {
    const snapshot = snapshotFact({ placement_id: 'p1', date: '2026-01-02', views: 3, likes: 2, comments: 1, shares: null });
    const enqueue = (queues: Queues) => [
      queues.add('placement_metrics', [snapshot]),
      // @ts-expect-error a snapshot is not a placement row
      queues.add('placements', [snapshot]),
      // @ts-expect-error nor a creator row
      queues.add('creators', [snapshot]),
    ];
    expect(enqueue).toBeTypeOf('function');
    expect(snapshot).toMatchObject({ placement_id: 'p1', date: '2026-01-02', views: 3, shares: null });
  });

  it('each kind has one writer; the kinds accepted in Postgres have an outbox, checked by id', () => {
    expect(FACT_WRITERS.map((w) => w.kind).sort()).toEqual([...FACT_KINDS].sort());
    expect(OUTBOXES.map((o) => [o.kind, o.source, o.table, o.idColumn])).toEqual([
      ['installs', 'installs', 'installs', 'id'],
      ['ledger', 'ledger_events', 'ledger', 'id'],
      ['creators', 'creators', 'creators', 'creator_id'],
    ]);
    expect(() => outboxOf({ kind: 'clicks', table: 'clicks', outbox: { source: 'creators', fact: creatorFact } })).toThrow(/outbox kind/);
  });

  it('the placement and creator facts carry what their ClickHouse tables need', () => {
    const placement = placementFact({
      id: 'p1',
      brand_id: 'b1',
      campaign_id: 'c1',
      creator_id: null,
      platform: 'tiktok',
      posted_at: '2026-01-02T03:04:05+01:00',
    });
    expect(placement).toMatchObject({ placement_id: 'p1', posted_at: '2026-01-02 02:04:05.000', url: null, caption: null });
    const creator = creatorFact({ id: 'k1', name: 'Kim', handles: [{ platform: 'tiktok', handle: '@kim' }], followers: null });
    expect(creator).toMatchObject({ creator_id: 'k1', name: 'Kim', handles: [{ platform: 'tiktok', handle: '@kim' }], followers: null });
    // A later fact of the same creator replaces it in the ReplacingMergeTree.
    const later = creatorFact({ id: 'k1', name: 'Kim Lee', handles: [], followers: 1 });
    expect(BigInt(later.version)).toBeGreaterThan(BigInt(creator.version));
  });
});
