/**
 * A bounded, expiring in-process memo for look-ups whose answers change rarely or never
 * (a pixel key's brand, a link's brand and creator). Only found values are kept, so a
 * record created a moment ago is never hidden by an earlier miss. When full, the oldest
 * entry goes (Map keeps insertion order).
 */
export class Memo<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  async get(key: string, load: (key: string) => Promise<V | null>): Promise<V | null> {
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > Date.now()) return hit.value;
    const value = await load(key);
    this.entries.delete(key);
    if (value !== null) {
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, { value, expiresAt: Date.now() + this.ttlMs });
    }
    return value;
  }
}
