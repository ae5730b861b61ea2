import { readdir } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * `npm run bench [-- NAME]`: runs every bench/*.bench.ts (or those whose file or entry
 * name contains NAME). Each file default-exports `async (emit) => …` and calls `emit`
 * once per benchmark with one JSON object: {name, <figures>_ms|_rps|_mb, baseline, ratio}.
 */
export type BenchResult = { name: string; baseline?: Record<string, number>; ratio?: number; [figure: string]: unknown };
export type Bench = (emit: (r: BenchResult) => void, filter: string | undefined) => Promise<void>;

const dir = fileURLToPath(new URL('.', import.meta.url));
const filter = process.argv[2];
const files = (await readdir(dir)).filter((f) => f.endsWith('.bench.ts')).sort();
let ran = 0;
for (const file of files) {
  const mod = (await import(pathToFileURL(`${dir}/${file}`).href)) as { default: Bench; names?: string[] };
  const names = mod.names ?? [file.replace(/\.bench\.ts$/, '')];
  if (filter && !file.includes(filter) && !names.some((n) => n.includes(filter))) continue;
  ran++;
  await mod.default((r) => console.log(JSON.stringify(r)), filter && !file.includes(filter) ? filter : undefined);
}
if (ran === 0) {
  console.error(filter ? `no benchmark matches "${filter}"` : 'no benchmarks found');
  process.exit(1);
}
process.exit(0);
