import { BoundedMap } from '../../bounded-map';

/**
 * A bounded, expiring in-process memo for look-ups that rarely change (a pixel key's brand, a
 * link's brand). Only found values are kept, so a record created a moment ago is never hidden by an
 * earlier miss; when full, the oldest entry goes.
 */
export class Memo<V> {
  private readonly entries: BoundedMap<string, { value: V; expiresAt: number }>;

  constructor(
    private readonly ttlMs: number,
    maxEntries = 10_000,
  ) {
    this.entries = new BoundedMap({ maxEntries });
  }

  async get(key: string, load: (key: string) => Promise<V | null>): Promise<V | null> {
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > Date.now()) return hit.value;
    const value = await load(key);
    this.entries.delete(key);
    if (value !== null) this.entries.set(key, { value, expiresAt: Date.now() + this.ttlMs });
    return value;
  }
}
