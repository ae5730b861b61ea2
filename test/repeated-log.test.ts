import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger';
import { RepeatedLog } from '../src/repeated-log';
import { sleep } from './helpers/harness';

/** Loud failures: a failure that repeats logs one line a second at most, with its count. */
function captured() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger('warn', { write: (line: string) => lines.push(JSON.parse(line)) });
  return { log, lines };
}

describe('RepeatedLog', () => {
  it('logs a burst of failures as one line with their count at the end of its interval, then one line per interval while they go on', async () => {
    const { log, lines } = captured();
    const failures = new RepeatedLog(log, 'warn', 'Redis unreachable', { countField: 'errors', intervalMs: 200 });
    for (let i = 0; i < 500; i++) failures.report({ err: `connect ECONNREFUSED (${i})` });
    expect(lines).toEqual([]);
    await sleep(250);
    expect(lines).toEqual([expect.objectContaining({ level: 40, msg: 'Redis unreachable', errors: 500, err: 'connect ECONNREFUSED (499)' })]);
    for (let i = 0; i < 30; i++) failures.report();
    await sleep(250);
    expect(lines.map((l) => l.errors)).toEqual([500, 30]);
    await sleep(250); // quiet: no line
    expect(lines).toHaveLength(2);
  });

  it('counts one key once (one job reported by several commands), and flushes what it holds on demand', () => {
    const { log, lines } = captured();
    const vanished = new RepeatedLog(log, 'error', 'jobs vanished', { countField: 'jobs' });
    for (const id of ['a', 'b', 'a', 'c', 'b']) vanished.report({}, id);
    vanished.flush();
    expect(lines).toEqual([expect.objectContaining({ level: 50, msg: 'jobs vanished', jobs: 3 })]);
    vanished.flush();
    expect(lines).toHaveLength(1);
  });
});
