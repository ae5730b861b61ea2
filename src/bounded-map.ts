/**
 * An in-process cache's store: a Map held under `maxEntries` entries and `maxBytes` of their
 * estimated size, whatever keys callers make up. The entry set longest ago makes room first;
 * `touch` makes a read entry the newest (least recently used goes first).
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, { value: V; bytes: number }>();
  private totalBytes = 0;

  constructor(private readonly limits: { maxEntries: number; maxBytes?: number }) {}

  /** The estimated size of what is held (the `bytes` given to set). */
  get bytes(): number {
    return this.totalBytes;
  }

  get(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** Makes `key` the newest entry, so it is the last to make room. */
  touch(key: K): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.entries.set(key, entry);
  }

  /** Sets `key` as the newest entry, removing the oldest until it fits. */
  set(key: K, value: V, bytes = 0): void {
    this.delete(key);
    const { maxEntries, maxBytes = Number.POSITIVE_INFINITY } = this.limits;
    while (this.entries.size > 0 && (this.entries.size >= maxEntries || this.totalBytes + bytes > maxBytes)) {
      this.delete(this.entries.keys().next().value!);
    }
    this.entries.set(key, { value, bytes });
    this.totalBytes += bytes;
  }

  delete(key: K): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.totalBytes -= entry.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.totalBytes = 0;
  }
}

/**
 * `compute` remembered for the last `maxEntries` texts of up to `maxLength` characters; longer
 * ones are computed each time, so made-up long texts cannot fill memory. Keys are copied: a
 * trimmed or cut request value is a view of the whole value it came from (up to the body limit).
 */
export function rememberedText<V extends NonNullable<unknown> | null>(
  compute: (text: string) => V,
  limits: { maxEntries: number; maxLength: number },
): (text: string) => V {
  const kept = new BoundedMap<string, V>({ maxEntries: limits.maxEntries });
  return (text) => {
    if (text.length > limits.maxLength) return compute(text);
    let value = kept.get(text);
    if (value === undefined) {
      value = compute(text);
      // UTF-16 code units copied as they are, lone surrogates too.
      kept.set(Buffer.from(text, 'utf16le').toString('utf16le'), value);
    }
    return value;
  };
}
