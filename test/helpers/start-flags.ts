import { readFileSync } from 'node:fs';

/** The Node flags `npm start` runs the service with (package.json), so tests and benches run it as users do. */
export const START_NODE_FLAGS: string[] = (() => {
  const start: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).scripts.start;
  const flags = /^exec node (.*?)--import tsx src\/main\.ts all$/.exec(start)?.[1];
  if (flags === undefined) throw new Error(`package.json's start script is not "exec node <flags> --import tsx src/main.ts all": ${start}`);
  return flags.split(' ').filter(Boolean);
})();
