import type { FastifyReply } from 'fastify';
import { todayUtc } from '../http/query';
import { AnswerCache } from './answers';
import type { FactArea, FactChanges, RecordChanges } from './changes';

/**
 * The one read pipeline of the Data API and the portal: scope -> query -> cached answer
 * (docs/reads.md). A read says what its answer depends on (its brand's records and the facts of one
 * area); the pipeline takes their versions before anything is read, keeps the answer under them,
 * and serves it until a change moves them. Nothing else invalidates: writers and triggers announce
 * changes (./changes.ts).
 */

/** One read of one brand's answer. */
export type Read<S> = {
  brandId: string;
  /** The facts the answer counts; it depends on the brand's records (and shared ones) too. */
  reads: FactArea;
  /** The question: the route's path and the parsed query that shapes the answer (today's date is added). */
  path: string;
  query: unknown;
  /** Step 1: what the question means for the brand (its records, the period's days). */
  scope(): Promise<S>;
  /** Step 2: the answer for that scope, as JSON text. */
  answer(scope: S): Promise<string>;
};

export type ReadsOptions = {
  facts: FactChanges;
  records: RecordChanges;
  /** Memory for answers (READ_CACHE_MB); 0 reads every request through. */
  maxBytes: number;
  maxAgeMs?: number;
};

export class Reads {
  readonly facts: FactChanges;
  readonly records: RecordChanges;
  private readonly cache: AnswerCache;

  constructor(opts: ReadsOptions) {
    this.facts = opts.facts;
    this.records = opts.records;
    this.cache = new AnswerCache({ maxBytes: opts.maxBytes, maxAgeMs: opts.maxAgeMs });
  }

  /** What the brand's records and its facts of `area` stand at now. */
  version(brandId: string, area: FactArea): string {
    return `${this.records.version('records', brandId)}/${this.facts.version(area, brandId)}`;
  }

  /** Runs a read: its versions first, then (unless an answer at them is kept) its scope and its query. */
  answer<S>(r: Read<S>): Promise<string> {
    return this.kept(r.brandId, r.reads, `${r.path} ${JSON.stringify(r.query)} ${todayUtc()}`, async () => r.answer(await r.scope()));
  }

  /** A value several answers share (a brand's first posting day), kept as they are. */
  async value<T>(brandId: string, area: FactArea, question: string, read: () => Promise<T>): Promise<T> {
    return JSON.parse(await this.kept(brandId, area, question, async () => JSON.stringify(await read()))) as T;
  }

  private kept(brandId: string, area: FactArea, question: string, read: () => Promise<string>): Promise<string> {
    // While a feed is down a change could go unheard: every request reads through.
    if (!this.cache.enabled || !this.facts.live || !this.records.live) return read();
    // Taken before anything is read: a change during the read leaves its answer stale at once.
    const version = this.version(brandId, area);
    return this.cache.answer(`${area}\n${brandId}\n${question}`, version, read, (v) => v === this.version(brandId, area));
  }
}

/** Sends an answer kept as JSON text. */
export const sendJsonText = (reply: FastifyReply, text: string) => reply.type('application/json; charset=utf-8').send(text);
