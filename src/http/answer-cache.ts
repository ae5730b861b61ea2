import type { FastifyReply } from 'fastify';
import { BoundedMap } from '../bounded-map';
import type { RecordChanges } from '../db/record-changes';
import type { FactArea, FactChanges } from '../warehouse/fact-changes';
import { todayUtc } from './query';

/** The question a cached GET asks: its route, its parsed query and today (a period ends today, UTC). */
export const questionOf = (route: string, query: unknown) => `${route} ${JSON.stringify(query)} ${todayUtc()}`;

/** Sends an answer kept as JSON text. */
export const sendJsonText = (reply: FastifyReply, text: string) => reply.type('application/json; charset=utf-8').send(text);

type Entry = { version: string; text: string; expires: number };
/** What an entry costs besides its key's and text's characters: the map's slot, the entry, its version string. */
const ENTRY_BYTES = 200;

export type AnswerCacheOptions = {
  /** Facts landed per brand (the writers' notifications). */
  facts: FactChanges;
  /** Records the answers name (brands, campaigns, creators, links, domains, codes), per brand: migrations/0011. */
  records: RecordChanges;
  /** Memory for answers, counted as UTF-16 text; 0 turns the cache off. */
  maxBytes: number;
  /** An answer is read again after this long even without a notification (one could be lost). */
  maxAgeMs?: number;
};

/**
 * Answers of reads over facts (JSON text), per brand and question, kept until facts of that brand
 * land or a record they name changes. Concurrent misses of one question share one read; the least
 * recently used answers make room. While either feed is down every request reads through.
 */
export class AnswerCache {
  private readonly entries: BoundedMap<string, Entry>;
  private readonly reading = new Map<string, Promise<string>>();

  constructor(private readonly opts: AnswerCacheOptions) {
    // Bounded by bytes alone: each entry counts its key and text, and ENTRY_BYTES for the objects holding them.
    this.entries = new BoundedMap({ maxEntries: Number.POSITIVE_INFINITY, maxBytes: opts.maxBytes });
  }

  /** What the brand's facts and the records stand at now: take it before reading anything an answer is made of. */
  version(area: FactArea, brandId: string): string {
    return `${this.opts.records.version('records', brandId)}/${this.opts.facts.version(area, brandId)}`;
  }

  /**
   * The answer to `question` for the brand: cached, or `read` once for everyone asking now.
   * `version` defaults to now; a caller that read records for the answer before passes the one it took before them.
   */
  answer(area: FactArea, brandId: string, question: string, read: () => Promise<string>, version = this.version(area, brandId)): Promise<string> {
    const { facts, records, maxBytes } = this.opts;
    if (maxBytes === 0 || !facts.live || !records.live) return read();
    // Taken before reading: facts landing during the read leave the answer already stale.
    const key = `${area}\n${brandId}\n${question}`;
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
          this.store(key, { version, text, expires: Date.now() + (this.opts.maxAgeMs ?? 300_000) });
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
