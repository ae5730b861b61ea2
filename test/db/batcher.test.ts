import { describe, expect, it } from 'vitest';
import { Batcher } from '../../src/db/batcher';

describe('Batcher (group commit)', () => {
  it('runs calls of one event-loop turn as one batch, answering each its own output', async () => {
    const batches: number[][] = [];
    const doubler = new Batcher(async (inputs: number[]) => {
      batches.push(inputs);
      return inputs.map((n) => n * 2);
    });
    expect(await Promise.all([1, 2, 3].map((n) => doubler.call(n)))).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('fails only the calls whose input fails when a batch fails, running each input alone', async () => {
    const runs: number[][] = [];
    const picky = new Batcher(async (inputs: number[]) => {
      runs.push(inputs);
      if (inputs.includes(13)) throw new Error('unlucky');
      return inputs.map((n) => n + 1);
    });
    const results = await Promise.allSettled([1, 13, 2].map((n) => picky.call(n)));
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([2, 'unlucky', 3]);
    expect(runs).toEqual([[1, 13, 2], [1], [13], [2]]);
  });

  it('keeps at most maxRunning batches in flight; later calls wait and join the next batch', async () => {
    let inFlight = 0;
    let most = 0;
    const slow = new Batcher(
      async (inputs: number[]) => {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 20));
        inFlight--;
        return inputs;
      },
      { maxRunning: 2 },
    );
    const calls = [];
    for (let i = 0; i < 6; i++) {
      calls.push(slow.call(i));
      await new Promise((r) => setImmediate(r)); // each call in its own turn
    }
    expect(await Promise.all(calls)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(most).toBe(2);
  });
});
