import type { Logger } from 'pino';

/**
 * A failure that may repeat many times a second is logged once a second at most, with its count:
 * the first occurrence starts the second, the line comes at its end. With `key`, occurrences of one
 * key count once (one job reported by several commands).
 */
export class RepeatedLog {
  private count = 0;
  private readonly keys = new Set<string>();
  private last: Record<string, unknown> = {};
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: Pick<Logger, 'warn' | 'error'>,
    private readonly level: 'warn' | 'error',
    private readonly message: string,
    private readonly opts: { countField?: string; intervalMs?: number } = {},
  ) {}

  /** Counts one occurrence; `fields` (the latest occurrence's) go on the line, e.g. `{ err }`. */
  report(fields: Record<string, unknown> = {}, key?: string): void {
    if (key !== undefined) {
      if (this.keys.has(key)) return;
      this.keys.add(key);
    }
    this.count++;
    this.last = fields;
    if (this.timer) return;
    this.timer = setTimeout(() => this.flush(), this.opts.intervalMs ?? 1000);
    this.timer.unref();
  }

  /** Logs what is counted and not yet logged (also at shutdown). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.count === 0) return;
    this.log[this.level]({ ...this.last, [this.opts.countField ?? 'count']: this.count }, this.message);
    this.count = 0;
    this.keys.clear();
  }
}
