/**
 * Group commit: calls made while earlier batches are in flight run together as the next batch (up
 * to `maxRunning` in flight); `run` answers one output per input, in order. A batch that throws
 * runs each input again alone, so a failure reaches only the calls that cause it.
 */
export class Batcher<I, O> {
  private waiting: { input: I; resolve(output: O): void; reject(err: unknown): void }[] = [];
  private running = 0;
  private scheduled = false;

  constructor(
    private readonly run: (inputs: I[]) => Promise<O[]>,
    private readonly opts: { maxBatch?: number; maxRunning?: number } = {},
  ) {}

  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      if (!this.scheduled && this.running < (this.opts.maxRunning ?? 1)) {
        // Calls of this event-loop turn join the batch.
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          void this.next();
        });
      }
    });
  }

  private async next(): Promise<void> {
    if (this.running >= (this.opts.maxRunning ?? 1) || this.waiting.length === 0) return;
    this.running++;
    const batch = this.waiting.splice(0, this.opts.maxBatch ?? 500);
    try {
      const outputs = await this.run(batch.map((w) => w.input));
      for (const [i, w] of batch.entries()) w.resolve(outputs[i]!);
    } catch (err) {
      if (batch.length === 1) batch[0]!.reject(err);
      // One bad input must not fail the requests that happened to share its statement:
      // each runs again alone, and only the calls whose own run fails are refused.
      else await Promise.all(batch.map((w) => this.run([w.input]).then(([output]) => w.resolve(output!), w.reject)));
    } finally {
      this.running--;
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
