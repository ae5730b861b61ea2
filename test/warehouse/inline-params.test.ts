import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inlineParams } from '../../src/warehouse/inline-params';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

/**
 * Embedded reads write their values into the statement (src/warehouse/inline-params.ts) so that
 * several run at once: every value must come back exactly as given, none may end its literal, and
 * concurrent reads must each see their own values.
 */
let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: false });
});
afterAll(async () => destroyTestService(t));

const HOSTILE = [
  "it's",
  'back\\slash',
  "\\'; SELECT 1; --",
  "x' OR 1=1 OR 'a'='a",
  'line\nbreak\r\ttab',
  'nul\u0000byte\u007f',
  '{other:String}',
  'émoji 🎉 ünïcödé',
  '',
];

describe('embedded reads with their values inlined', () => {
  it('reads every string back exactly, as a scalar and inside an array', async () => {
    const wh = t.services.warehouse;
    for (const s of HOSTILE) {
      const [row] = await wh.rows<{ s: string; n: number; a: string[] }>('SELECT {s:String} AS s, length({a:Array(String)}) AS n, {a:Array(String)} AS a', {
        s,
        a: [s, 'b'],
      });
      expect(row).toEqual({ s, n: 2, a: [s, 'b'] });
    }
  });

  it('types values as the placeholder says: dates, integers beyond 2^53, floats, empty arrays', async () => {
    const [row] = await t.services.warehouse.rows<Record<string, unknown>>(
      `SELECT {d:Date} + 1 AS next_day, toString({big:Int64}) AS big, {f:Float64} * 2 AS f,
              length({none:Array(String)}) AS none, 'x' IN {none:Array(String)} AS found`,
      { d: '2026-02-28', big: 2n ** 60n, f: 0.25, none: [] },
    );
    expect(row).toEqual({ next_day: '2026-03-01', big: String(2n ** 60n), f: 0.5, none: 0, found: 0 });
    const [time] = await t.services.warehouse.rows<{ ms: number }>(`SELECT toUnixTimestamp64Milli({at:DateTime64(3, 'UTC')}) AS ms`, {
      at: new Date(Date.UTC(2026, 4, 1, 23, 59, 59, 123)),
    });
    expect(time!.ms).toBe(Date.UTC(2026, 4, 1, 23, 59, 59, 123));
  });

  it('gives each of many concurrent reads its own values', async () => {
    const ids = Array.from({ length: 24 }, (_, i) => `brand-${i}-'${'\\'.repeat(i % 3)}`);
    const answers = await Promise.all(ids.map((id) => t.services.warehouse.rows<{ id: string }>('SELECT {id:String} AS id', { id })));
    expect(answers.map(([row]) => row!.id)).toEqual(ids);
  });

  it('refuses a placeholder without its value, and values it cannot write', () => {
    expect(() => inlineParams('SELECT {a:String}', {})).toThrow(/a is not set/);
    expect(() => inlineParams('SELECT {f:Float64}', { f: Number.NaN })).toThrow(/finite/);
    expect(() => inlineParams('SELECT {o:String}', { o: { toString: () => "'" } })).toThrow(/unsupported/);
    expect(inlineParams("SELECT {s:String}", { s: "'\\" })).toBe("SELECT CAST('\\'\\\\' AS String)");
  });
});
