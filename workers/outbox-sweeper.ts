import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { installFact, type InstallRow } from '../src/attribution/installs/fact';
import { ledgerFact, type LedgerRow } from '../src/attribution/ledger/fact';
import type { Db } from '../src/db/database';
import type { OutboxKind } from '../src/attribution/ledger/outbox';
import type { FactRow } from '../src/queues/facts';
import { FactQueues } from '../src/queues/queues';
import { createRedis } from '../src/queues/redis';
import type { Warehouse } from '../src/warehouse/clickhouse';

/**
 * Installs and ledger events are accepted by a Postgres statement that also makes their
 * facts pending in `fact_outbox`; the row leaves the outbox once ClickHouse acknowledged
 * its fact. The sweeper finds facts pending past a grace period and repairs them: those
 * ClickHouse already has are confirmed, the others are queued again as replays (the worker
 * checks replayed rows by id, so a fact that races its replay is still written once).
 * See docs/ingestion.md for the failure cases this covers.
 */
type Outbox = { kind: OutboxKind; table: 'installs' | 'ledger_events'; warehouseTable: string; fact(row: FactRow): FactRow };

export const OUTBOXES: Outbox[] = [
  { kind: 'installs', table: 'installs', warehouseTable: 'installs', fact: (row) => installFact(row as InstallRow) },
  { kind: 'ledger', table: 'ledger_events', warehouseTable: 'ledger', fact: (row) => ledgerFact(row as LedgerRow) },
];

/** Takes out of the outbox the facts ClickHouse acknowledged (the writers' afterInsert, and the sweeper). */
export async function confirmWarehoused(db: Db, kind: OutboxKind, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`DELETE FROM fact_outbox WHERE kind = ${kind} AND id = ANY(${ids}::text[])`.execute(db);
}

/** Seconds since the oldest fact still pending in each outbox was accepted (0: none); one index look-up each. */
export async function outboxPendingSeconds(db: Db): Promise<Record<OutboxKind, number>> {
  const { rows } = await sql<{ kind: OutboxKind; age: number | null }>`
    SELECT k.kind, extract(epoch FROM now() - (SELECT min(o.recorded_at) FROM fact_outbox o WHERE o.kind = k.kind))::float8 AS age
    FROM (VALUES ${sql.join(OUTBOXES.map((o) => sql`(${o.kind})`))}) AS k(kind)`.execute(db);
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

type SweepDeps = { db: Db; warehouse: Warehouse; queues: FactQueues; log: Logger };
type Cursor = { at: string; id: string };
const START: Cursor = { at: '-infinity', id: '' };

export class OutboxSweeper {
  private readonly graceMs: number;
  private readonly batchSize: number;
  private readonly resendAfterMs: number;
  /** Where the next sweep of each outbox continues, so old stuck rows cannot starve newer ones. */
  private readonly cursors = new Map<string, Cursor>();
  /** `kind:id` → when this sweeper last queued the row. */
  private readonly resent = new Map<string, number>();
  /**
   * Rows recorded before this sweeper started are due at once, whatever their age: their job
   * cannot be waiting in this process, and after a crash some never reached Redis. (Another
   * live process's rows taken too early are only checked by id and written once.) Rounded up
   * to the next millisecond: Postgres records microseconds, Date.now() whole milliseconds,
   * and a row recorded in the start's own millisecond was recorded before it.
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
    for (const outbox of OUTBOXES) {
      try {
        const r = await this.sweepOutbox(outbox);
        total.confirmed += r.confirmed;
        total.requeued += r.requeued;
      } catch (err) {
        // ClickHouse or Redis unavailable: nothing is queued blindly; the next sweep retries.
        this.deps.log.warn({ err, outbox: outbox.table }, 'outbox sweep failed');
      }
    }
    return total;
  }

  private async sweepOutbox(outbox: Outbox): Promise<{ confirmed: number; requeued: number }> {
    const { db, warehouse, queues, log } = this.deps;
    const cursor = this.cursors.get(outbox.table) ?? START;
    // The source row of each pending fact; none when its brand was deleted since.
    const { rows } = await sql<FactRow & { pending_id: string; cursor_at: string; id: string | null }>`
      SELECT t.*, o.id AS pending_id, o.recorded_at::text AS cursor_at
      FROM fact_outbox o LEFT JOIN ${sql.table(outbox.table)} t ON t.id = o.id
      WHERE o.kind = ${outbox.kind}
        AND o.recorded_at < greatest(now() - make_interval(secs => ${this.graceMs / 1000}), ${this.startedAt}::timestamptz)
        AND (o.recorded_at, o.id) > (${cursor.at}::timestamptz, ${cursor.id})
      ORDER BY o.recorded_at, o.id
      LIMIT ${this.batchSize}`.execute(db);
    const last = rows.at(-1);
    this.cursors.set(outbox.table, rows.length < this.batchSize || !last ? START : { at: last.cursor_at, id: last.pending_id });
    if (rows.length === 0) return { confirmed: 0, requeued: 0 };

    // Facts ClickHouse has but that were never confirmed (the worker stopped between insert and confirmation).
    const sources = rows.filter((r) => r.id !== null);
    const present = await warehouse.rows<{ id: string }>(
      `SELECT id FROM ${outbox.warehouseTable} WHERE id IN {ids:Array(String)}`,
      { ids: sources.map((r) => r.pending_id) },
    );
    const confirmed = new Set(present.map((r) => r.id));
    const orphans = rows.filter((r) => r.id === null).map((r) => r.pending_id);
    await confirmWarehoused(db, outbox.kind, [...confirmed, ...orphans]);

    // Facts whose job is gone (never queued, Redis lost it) or overdue: queue them again.
    const now = Date.now();
    for (const [key, at] of this.resent) if (now - at >= this.resendAfterMs) this.resent.delete(key);
    const missing = sources.filter((r) => !confirmed.has(r.pending_id) && !this.resent.has(`${outbox.kind}:${r.pending_id}`));
    if (missing.length > 0) {
      await queues.addReplay(
        outbox.kind,
        missing.map((row) => outbox.fact(row)),
      );
      for (const r of missing) this.resent.set(`${outbox.kind}:${r.pending_id}`, now);
      log.info({ outbox: outbox.table, rows: missing.length }, 'outbox rows queued again');
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
