import { BoundedMap } from '../bounded-map';

type Entry = { version: string; text: string; expires: number };
/** What an entry costs besides its key's and text's characters: the map's slot, the entry, its version string. */
const ENTRY_BYTES = 200;

export type AnswerCacheOptions = {
  /** Memory for answers, counted as UTF-16 text; 0 turns the cache off. */
  maxBytes: number;
  /** An answer is read again after this long even without a notification (one could be lost). */
  maxAgeMs?: number;
};

/**
 * Answers as JSON text by key, each kept under the version it was read at (./pipeline.ts owns the
 * versions). Concurrent misses of one key and version share one read; the least recently used
 * answers make room.
 */
export class AnswerCache {
  private readonly entries: BoundedMap<string, Entry>;
  private readonly reading = new Map<string, Promise<string>>();

  constructor(private readonly opts: AnswerCacheOptions) {
    // Bounded by bytes alone: each entry counts its key and text, and ENTRY_BYTES for the objects holding them.
    this.entries = new BoundedMap({ maxEntries: Number.POSITIVE_INFINITY, maxBytes: opts.maxBytes });
  }

  get enabled(): boolean {
    return this.opts.maxBytes > 0;
  }

  /**
   * The answer kept for `key` at `version`, or `read` once for everyone asking now; kept only when
   * `current(version)` still holds once read (a change during the read leaves it stale at once).
   */
  answer(key: string, version: string, read: () => Promise<string>, current: (version: string) => boolean): Promise<string> {
    const hit = this.entries.get(key);
    if (hit && hit.version === version && hit.expires > Date.now()) {
      this.entries.touch(key);
      return Promise.resolve(hit.text);
    }
    const flight = `${key}\n${version}`;
    let pending = this.reading.get(flight);
    if (!pending) {
      pending = read()
        .then((text) => {
          if (current(version)) this.store(key, { version, text, expires: Date.now() + (this.opts.maxAgeMs ?? 300_000) });
          return text;
        })
        .finally(() => this.reading.delete(flight));
      this.reading.set(flight, pending);
    }
    return pending;
  }

  private store(key: string, entry: Entry): void {
    const size = ENTRY_BYTES + (key.length + entry.text.length) * 2;
    if (size > this.opts.maxBytes / 4) return; // one answer never takes most of the cache
    this.entries.set(key, entry, size);
  }
}
