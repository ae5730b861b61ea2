import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creatorFact, placementFact } from '../../src/placements/facts';
import type { FactRow } from '../../src/queues/facts';
import { createLogger } from '../../src/logger';
import { RepeatedLog } from '../../src/repeated-log';
import { factChanges } from '../../src/reads/changes';
import { announce, type BatchJob, batchToken, confirm, dedupe, type FactWriter, insert, writeBatch, type WriterContext } from '../../workers/write';
import { FACT_WRITERS } from '../../workers/writers';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

/** The write's steps one by one, on the real stores: dedupe, insert, confirm, announce, and their order in writeBatch. */

let t: TestService;
let ctx: WriterContext;
beforeAll(async () => {
  t = await startTestService({ workers: false });
  ctx = { warehouse: t.services.warehouse, db: t.services.db };
});
afterAll(async () => destroyTestService(t));

const creators = FACT_WRITERS.find((w) => w.kind === 'creators')!;
const creator = (id: string) => creatorFact({ id, name: id, handles: [], followers: null });
const ids = (rows: FactRow[]) => rows.map((r) => String(r.creator_id));
const job = (rows: FactRow[], mayHaveRun = false): BatchJob => ({ id: randomUUID(), rows, mayHaveRun });
const uniq = (name: string) => `${name}-${randomUUID().slice(0, 8)}`;

/** Raw copies of these creators in ClickHouse, without FINAL: a second insert would show here. */
const creatorCopies = async (prefix: string) =>
  (await t.services.warehouse.rows<{ n: number }>('SELECT count() AS n FROM creators WHERE startsWith(creator_id, {p:String})', { p: prefix }))[0]!.n;
const pending = async (kind: string, idList: string[]) =>
  (await sql<{ id: string }>`SELECT id FROM fact_outbox WHERE kind = ${kind} AND id = ANY(${idList}::text[]) ORDER BY id`.execute(t.services.db)).rows.map((r) => r.id);
const recordPending = (kind: string, idList: string[]) =>
  sql`INSERT INTO fact_outbox (kind, id, recorded_at) SELECT ${kind}, id, now() FROM unnest(${idList}::text[]) AS id`.execute(t.services.db);
/** A log whose failures the test can read. */
const testLogs = () => {
  const lines: { msg: string }[] = [];
  const log = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { lines, logs: { insertFailures: new RepeatedLog(log, 'warn', 'insert failed', { intervalMs: 0 }), noticeFailures: new RepeatedLog(log, 'warn', 'notice failed', { intervalMs: 0 }) } };
};

describe('the write of a batch, step by step', () => {
  it('dedupe: drops duplicates inside the batch and skips only the ids ClickHouse holds among jobs that may have run', async () => {
    const p = uniq('dedupe');
    await t.services.warehouse.insert('creators', [creator(`${p}-1`), creator(`${p}-2`)]);
    const first = job([creator(`${p}-1`), creator(`${p}-3`)]);
    const retried = job([creator(`${p}-1`), creator(`${p}-2`), creator(`${p}-4`)], true);
    const { missing, all } = await dedupe(creators, t.services.warehouse, [first, retried]);
    // A first attempt is not looked up (its row 1 goes in again: the token or the key merges it).
    expect(ids(all)).toEqual([`${p}-1`, `${p}-3`, `${p}-2`, `${p}-4`]);
    expect(ids(missing)).toEqual([`${p}-1`, `${p}-3`, `${p}-4`]);
    // A writer without an id column (its key replaces) takes every row as it came.
    const placements: FactWriter = { kind: 'placements', table: 'placements' };
    const rows = await dedupe(placements, t.services.warehouse, [first, retried]);
    expect(rows.missing).toHaveLength(5);
    expect(rows.all).toHaveLength(5);
  });

  it('insert: the same jobs in any order carry one token, so ClickHouse drops the replayed insert; derived tables see every row', async () => {
    const p = uniq('insert');
    const rows = [0, 1, 2].map((n) => placementFact({ id: `${p}-${n}`, brand_id: 'b-insert', campaign_id: 'c', creator_id: null, platform: 'tiktok', posted_at: '2026-06-01T00:00:00Z' }));
    const jobs = [job(rows.slice(0, 2)), job(rows.slice(2))];
    expect(batchToken([...jobs].reverse())).toBe(batchToken(jobs));
    const derived: number[] = [];
    const writer: FactWriter = { kind: 'placements', table: 'placements', afterInsert: async (all) => void derived.push(all.length) };
    await insert(writer, ctx, { missing: rows, all: rows }, batchToken(jobs));
    await insert(writer, ctx, { missing: rows, all: rows }, batchToken([...jobs].reverse()));
    const [copies] = await t.services.warehouse.rows<{ n: number }>('SELECT count() AS n FROM placements WHERE startsWith(placement_id, {p:String})', { p });
    expect(copies?.n).toBe(3);
    expect(derived).toEqual([3, 3]);
  });

  it('confirm: every row of the batch leaves its outbox; a writer without an outbox touches none', async () => {
    const p = uniq('confirm');
    const idList = [`${p}-1`, `${p}-2`, `${p}-3`];
    await recordPending('creators', idList);
    await confirm({ ...creators, outbox: undefined }, t.services.db, idList.map(creator));
    expect(await pending('creators', idList)).toEqual(idList);
    await confirm(creators, t.services.db, idList.slice(0, 2).map(creator));
    expect(await pending('creators', idList)).toEqual([`${p}-3`]);
  });

  it("announce: the brands of the landed rows see their cached answers' versions move", async () => {
    const changes = factChanges(t.config.databaseUrl, t.services.log);
    await changes.start();
    try {
      const before = { a: changes.version('attribution', 'brand-a'), b: changes.version('attribution', 'brand-b') };
      const clicks = FACT_WRITERS.find((w) => w.kind === 'clicks')!;
      await announce(clicks, ctx, [{ brand_id: 'brand-a' }]);
      await changes.caughtUp();
      expect(changes.version('attribution', 'brand-a')).not.toBe(before.a);
      expect(changes.version('attribution', 'brand-b')).toBe(before.b);
    } finally {
      await changes.close();
    }
  });

  it('writeBatch: a failed fan-out leaves the facts in the outbox and unannounced; the retry inserts nothing twice, then confirms and announces', async () => {
    const p = uniq('order');
    const idList = [`${p}-1`, `${p}-2`];
    await recordPending('creators', idList);
    const steps: string[] = [];
    let fanOutFails = true;
    const writer: FactWriter = {
      ...creators,
      async fanOut(rows) {
        steps.push(`fan out ${rows.length}`);
        if (fanOutFails) throw new Error('Postgres away');
      },
      lands: {
        area: 'placements',
        brands: () => {
          steps.push('announce');
          return 'every brand';
        },
      },
    };
    const { lines, logs } = testLogs();
    const jobs = [job(idList.map(creator))];
    await expect(writeBatch(writer, ctx, jobs, logs)).rejects.toThrow('Postgres away');
    expect(await creatorCopies(p)).toBe(2);
    expect(await pending('creators', idList)).toEqual(idList);
    expect(steps).toEqual(['fan out 2']);
    logs.insertFailures.flush();
    expect(lines).toEqual([expect.objectContaining({ msg: 'insert failed', kind: 'creators', jobs: 1, rows: 2 })]);

    fanOutFails = false;
    const retried = jobs.map((j) => ({ ...j, mayHaveRun: true }));
    expect(await writeBatch(writer, ctx, retried, logs)).toBe(0);
    expect(await creatorCopies(p)).toBe(2);
    expect(await pending('creators', idList)).toEqual([]);
    expect(steps).toEqual(['fan out 2', 'fan out 2', 'announce']);
  });
});
