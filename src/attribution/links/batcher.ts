/**
 * Group commit for per-request database work. Calls made while the previous batch is in
 * flight (or in the same event-loop turn) run together as the next batch: one round trip,
 * one statement plan and one commit for many requests, and the batch grows with the load.
 * Batches run one at a time, so every batch starts after the calls in it were made: a
 * look-up never answers from before its request arrived.
 *
 * `run` answers one output per input, in order. If it throws, every call of the batch fails.
 */
export class Batcher<I, O> {
  private waiting: { input: I; resolve(output: O): void; reject(err: unknown): void }[] = [];
  private running = false;

  constructor(
    private readonly run: (inputs: I[]) => Promise<O[]>,
    private readonly maxBatch = 500,
  ) {}

  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      if (!this.running && this.waiting.length === 1) setImmediate(() => void this.next());
    });
  }

  private async next(): Promise<void> {
    if (this.running || this.waiting.length === 0) return;
    this.running = true;
    const batch = this.waiting.splice(0, this.maxBatch);
    try {
      const outputs = await this.run(batch.map((w) => w.input));
      for (const [i, w] of batch.entries()) w.resolve(outputs[i]!);
    } catch (err) {
      for (const w of batch) w.reject(err);
    } finally {
      this.running = false;
      void this.next();
    }
  }
}

/**
 * Rows of a batched insert ordered by their unique key: concurrent statements (other
 * processes) then wait on each other's keys in one order and cannot deadlock.
 */
export function sortByKey<T>(rows: T[], key: (row: T) => string[]): T[] {
  const keyed = rows.map((row) => ({ row, key: key(row).join('\u0000') }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return keyed.map((k) => k.row);
}
