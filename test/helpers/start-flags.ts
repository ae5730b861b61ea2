import { readFileSync } from 'node:fs';

const { scripts } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };

/** The Node flags `npm start`, `npm run api` and `npm run workers` run the service with, so tests and benches run it as users do. */
export const START_NODE_FLAGS: string[] = (() => {
  const flagsOf = (mode: string) => {
    const flags = new RegExp(`^exec node (.*?)--import tsx src/main\\.ts ${mode}$`).exec(scripts[mode === 'all' ? 'start' : mode] ?? '')?.[1];
    if (flags === undefined) throw new Error(`package.json: the ${mode} script is not "exec node <flags> --import tsx src/main.ts ${mode}"`);
    return flags;
  };
  const flags = flagsOf('all');
  if (flagsOf('api') !== flags || flagsOf('workers') !== flags) throw new Error('package.json: start, api and workers run Node with different flags');
  // Benches that run the service in their own process (webhooks, ingestion) must run it as `npm start` does.
  if (/^node (.*?)--import tsx bench\/run\.ts$/.exec(scripts.bench ?? '')?.[1] !== flags) throw new Error('package.json: bench runs Node with other flags than start');
  return flags.split(' ').filter(Boolean);
})();
