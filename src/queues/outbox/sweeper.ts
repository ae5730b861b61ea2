import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../../db/database';
import type { Warehouse } from '../../warehouse/clickhouse';
import type { FactRow } from '../facts';
import { FactQueues } from '../queues';
import { createRedis } from '../redis';
import { OUTBOX_KINDS, type OutboxKind } from './accept';

/** A fact kind accepted in Postgres, as its writer line declares it (workers/writers.ts). */
export type Outbox = {
  kind: OutboxKind;
  /** The Postgres table of the accepted rows (its `id` is the outbox id). */
  source: 'installs' | 'ledger_events' | 'creators';
  /** The ClickHouse table and its column holding that id. */
  table: string;
  idColumn: string;
  /** The fact of a source row, as it was queued when the row was accepted. */
  fact(row: never): FactRow;
  /** Runs on facts found in ClickHouse before they are confirmed, as the writer's own confirmation does (webhook fan-out). */
  afterWarehoused?(facts: FactRow[]): Promise<void>;
};

/** Takes out of the outbox the facts ClickHouse acknowledged (the batch workers, and the sweeper). */
export async function confirmWarehoused(db: Db, kind: OutboxKind, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`DELETE FROM fact_outbox WHERE kind = ${kind} AND id = ANY(${ids}::text[])`.execute(db);
}

/** Seconds since the oldest fact still pending in each outbox was accepted (0: none); one index look-up each. */
export async function outboxPendingSeconds(db: Db): Promise<Record<OutboxKind, number>> {
  const { rows } = await sql<{ kind: OutboxKind; age: number | null }>`
    SELECT k.kind, extract(epoch FROM now() - (SELECT min(o.recorded_at) FROM fact_outbox o WHERE o.kind = k.kind))::float8 AS age
    FROM (VALUES ${sql.join(OUTBOX_KINDS.map((kind) => sql`(${kind})`))}) AS k(kind)`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.kind, Math.max(0, r.age ?? 0)])) as Record<OutboxKind, number>;
}

export type SweeperOptions = {
  /** Rows younger than this are left to their own job, unless recorded before the sweeper started. */
  graceMs?: number;
  /** Rows looked at per outbox and sweep. */
  batchSize?: number;
  /** A row queued again by this sweeper is not queued again before this long (a backlog is not amplified). */
  resendAfterMs?: number;
};

type SweepDeps = { db: Db; warehouse: Warehouse; queues: FactQueues; log: Logger; outboxes: readonly Outbox[] };
type Cursor = { at: string; id: string };
const START: Cursor = { at: '-infinity', id: '' };

/**
 * Repairs facts pending in `fact_outbox` past a grace period: those ClickHouse has are confirmed,
 * the others queued again as replays, which the worker checks by id (so written once). The
 * failure cases it covers: docs/ingestion.md.
 */
export class OutboxSweeper {
  private readonly graceMs: number;
  private readonly batchSize: number;
  private readonly resendAfterMs: number;
  /** Where the next sweep of each outbox continues, so old stuck rows cannot starve newer ones. */
  private readonly cursors = new Map<string, Cursor>();
  /** `kind:id` → when this sweeper last queued the row. */
  private readonly resent = new Map<string, number>();
  /**
   * Rows recorded before this sweeper started are due at once (after a crash some never reached
   * Redis). Rounded up to the next millisecond, as Postgres records microseconds.
   */
  private readonly startedAt = new Date(Date.now() + 1);

  constructor(
    private readonly deps: SweepDeps,
    opts: SweeperOptions = {},
  ) {
    this.graceMs = opts.graceMs ?? 10_000;
    this.batchSize = opts.batchSize ?? 1000;
    this.resendAfterMs = opts.resendAfterMs ?? 5 * 60_000;
  }

  /** One pass over every outbox: how many rows were found already in ClickHouse, and how many were queued again. */
  async sweep(): Promise<{ confirmed: number; requeued: number }> {
    const total = { confirmed: 0, requeued: 0 };
    for (const outbox of this.deps.outboxes) {
      try {
        const r = await this.sweepOutbox(outbox);
        total.confirmed += r.confirmed;
        total.requeued += r.requeued;
      } catch (err) {
        // ClickHouse or Redis unavailable: nothing is queued blindly; the next sweep retries.
        this.deps.log.warn({ err, outbox: outbox.kind }, 'outbox sweep failed');
      }
    }
    return total;
  }

  private async sweepOutbox(outbox: Outbox): Promise<{ confirmed: number; requeued: number }> {
    const { db, warehouse, queues, log } = this.deps;
    const cursor = this.cursors.get(outbox.kind) ?? START;
    // The source row of each pending fact; none when its brand was deleted since.
    const { rows } = await sql<FactRow & { pending_id: string; cursor_at: string; id: string | null }>`
      SELECT t.*, o.id AS pending_id, o.recorded_at::text AS cursor_at
      FROM fact_outbox o LEFT JOIN ${sql.table(outbox.source)} t ON t.id = o.id
      WHERE o.kind = ${outbox.kind}
        AND o.recorded_at < greatest(now() - make_interval(secs => ${this.graceMs / 1000}), ${this.startedAt}::timestamptz)
        AND (o.recorded_at, o.id) > (${cursor.at}::timestamptz, ${cursor.id})
      ORDER BY o.recorded_at, o.id
      LIMIT ${this.batchSize}`.execute(db);
    const last = rows.at(-1);
    this.cursors.set(outbox.kind, rows.length < this.batchSize || !last ? START : { at: last.cursor_at, id: last.pending_id });
    if (rows.length === 0) return { confirmed: 0, requeued: 0 };

    // Facts ClickHouse has but that were never confirmed (the worker stopped between insert and confirmation).
    const sources = rows.filter((r) => r.id !== null);
    const present = await warehouse.rows<{ id: string }>(
      `SELECT toString(${outbox.idColumn}) AS id FROM ${outbox.table} WHERE ${outbox.idColumn} IN {ids:Array(String)}`,
      { ids: sources.map((r) => r.pending_id) },
    );
    const confirmed = new Set(present.map((r) => r.id));
    const orphans = rows.filter((r) => r.id === null).map((r) => r.pending_id);
    if (outbox.afterWarehoused && confirmed.size > 0) {
      await outbox.afterWarehoused(sources.filter((r) => confirmed.has(r.pending_id)).map((row) => outbox.fact(row as never)));
    }
    await confirmWarehoused(db, outbox.kind, [...confirmed, ...orphans]);

    // Facts whose job is gone (never queued, Redis lost it) or overdue: queue them again.
    const now = Date.now();
    for (const [key, at] of this.resent) if (now - at >= this.resendAfterMs) this.resent.delete(key);
    const missing = sources.filter((r) => !confirmed.has(r.pending_id) && !this.resent.has(`${outbox.kind}:${r.pending_id}`));
    if (missing.length > 0) {
      await queues.addReplay(
        outbox.kind,
        missing.map((row) => outbox.fact(row as never)),
      );
      for (const r of missing) this.resent.set(`${outbox.kind}:${r.pending_id}`, now);
      log.info({ outbox: outbox.kind, rows: missing.length }, 'outbox rows queued again');
    }
    return { confirmed: confirmed.size, requeued: missing.length };
  }
}

export type SweeperHandle = { stop(): Promise<void> };

/**
 * Sweeps at once, then every `intervalMs`, queueing on its own Redis connection. A short Redis lock lets
 * one process sweep per interval when several worker processes run.
 */
export function startOutboxSweeper(
  deps: Omit<SweepDeps, 'queues'> & { redisUrl: string; prefix: string },
  opts: SweeperOptions & { intervalMs?: number } = {},
): SweeperHandle {
  const intervalMs = opts.intervalMs ?? 5_000;
  const redis = createRedis(deps.redisUrl);
  const queues = new FactQueues(redis, deps.prefix);
  const sweeper = new OutboxSweeper({ ...deps, queues }, opts);
  const lockKey = `${deps.prefix}:outbox-sweeper-lock`;
  let running: Promise<void> | undefined;
  const sweep = () => {
    running ??= (async () => {
      const locked = await redis.set(lockKey, randomUUID(), 'PX', intervalMs, 'NX');
      if (locked) await sweeper.sweep();
    })()
      .catch((err) => deps.log.warn({ err }, 'outbox sweep skipped'))
      .finally(() => {
        running = undefined;
      });
  };
  // At once, then every interval: after a crash, what the dead process had not queued goes first.
  sweep();
  const timer = setInterval(sweep, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
      await queues.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
