import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parse as parseCsv } from 'csv-parse';
import type { z } from 'zod';
import type { Db } from '../db/database';
import type { Queues } from '../facts';
import {
  type PlacementInput,
  placementReferenceProblems,
  placementSchema,
  queuePlacements,
  queueSnapshots,
  type SnapshotInput,
  snapshotSchema,
} from '../placements/intake';

/**
 * `npm run cli -- import placements|snapshots FILE` (NDJSON or CSV), streamed in chunks through
 * the internal endpoints' validation and queues. A first pass checks every record; only a file
 * without refusals is queued, so a bad file changes nothing.
 */
export type ImportKind = 'placements' | 'snapshots';
export type ImportReport = { kind: ImportKind; records: number; queued: number; refused: { line: number; message: string }[] };

const CHUNK = 10_000;
const MAX_REPORTED = 100;
const NUMERIC = new Set(['views', 'likes', 'comments', 'shares']);

type Parsed = { line: number; value: unknown };

export async function importFile(
  deps: { db: Db; queues: Queues },
  kind: ImportKind,
  path: string,
  opts: { dryRun?: boolean } = {},
): Promise<ImportReport> {
  const report: ImportReport = { kind, records: 0, queued: 0, refused: [] };
  const refuse = (line: number, message: string) => {
    if (report.refused.length < MAX_REPORTED) report.refused.push({ line, message });
  };
  let refusals = 0;
  for await (const chunk of validChunks(deps.db, kind, path, (line, message) => {
    refusals++;
    refuse(line, message);
  })) {
    report.records += chunk.records;
  }
  if (refusals > 0 || opts.dryRun) return report;
  // A refusal now (another brand claimed an id meanwhile, the file changed) is reported, never dropped in silence.
  for await (const chunk of validChunks(deps.db, kind, path, refuse)) {
    report.queued +=
      kind === 'placements'
        ? await queuePlacements(deps, chunk.items as PlacementInput[])
        : await queueSnapshots(deps.queues, chunk.items as SnapshotInput[]);
  }
  return report;
}

/** Chunks of valid records; each invalid one is reported through `refuse` and left out. */
async function* validChunks(db: Db, kind: ImportKind, path: string, refuse: (line: number, message: string) => void) {
  const schema: z.ZodType<PlacementInput | SnapshotInput> = kind === 'placements' ? placementSchema : snapshotSchema;
  let batch: { line: number; item: PlacementInput | SnapshotInput }[] = [];
  let records = 0;
  // Each placement id's brand in the whole file (an id belongs to one brand), across chunks.
  const brandOf = new Map<string, string>();
  const sameBrandAsBefore = ({ line, item }: { line: number; item: PlacementInput | SnapshotInput }) => {
    const { id, brand_id: brand } = item as PlacementInput;
    const first = brandOf.get(id);
    if (first === undefined) brandOf.set(id, brand);
    else if (first !== brand) refuse(line, 'id: placement id named under another brand earlier in this file');
    return first === undefined || first === brand;
  };
  const flush = async () => {
    let items = batch;
    if (kind === 'placements') {
      items = items.filter(sameBrandAsBefore);
      const problems = await placementReferenceProblems(db, items.map((b) => b.item as PlacementInput));
      const bad = new Set(problems.map((p) => p.index));
      for (const p of problems) refuse(items[p.index]!.line, `${p.field}: ${p.message}`);
      items = items.filter((_, i) => !bad.has(i));
    }
    const chunk = { records, items: items.map((b) => b.item) };
    batch = [];
    records = 0;
    return chunk;
  };
  for await (const { line, value } of readRecords(path)) {
    records++;
    const parsed = schema.safeParse(value);
    if (parsed.success) batch.push({ line, item: parsed.data });
    else refuse(line, parsed.error.issues.map((i) => `${i.path.join('.') || 'record'}: ${i.message}`).join('; '));
    if (batch.length >= CHUNK) yield await flush();
  }
  if (records > 0) yield await flush();
}

/** The file's records with their line numbers: CSV by extension, NDJSON otherwise. */
async function* readRecords(path: string): AsyncGenerator<Parsed> {
  // Opened first: a missing file is one rejected promise, not an 'error' event nothing listens to.
  const file = await open(path);
  if (path.toLowerCase().endsWith('.csv')) {
    const parser = file.createReadStream().pipe(parseCsv({ columns: true, skip_empty_lines: true, info: true }));
    for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      yield { line: info.lines, value: fromCsv(record) };
    }
    return;
  }
  let line = 0;
  for await (const text of createInterface({ input: file.createReadStream(), crlfDelay: Number.POSITIVE_INFINITY })) {
    line++;
    if (text.trim() === '') continue;
    try {
      yield { line, value: JSON.parse(text) };
    } catch {
      yield { line, value: undefined };
    }
  }
}

/** CSV cells are text: empty cells are null, counts are numbers. */
function fromCsv(record: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(record).map(([k, v]) => [k, v === '' ? null : NUMERIC.has(k) && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v]),
  );
}
