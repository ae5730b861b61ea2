import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Every temporary directory of a test run (embedded ClickHouse data, import files, the
 * processes main.test.ts starts) goes under one directory, removed when the run ends: a
 * forked test process cannot remove its own ClickHouse directory, which stays open until
 * the process is gone. The forks and their children find it through TMPDIR.
 */
export default function setup() {
  const root = mkdtempSync(join(tmpdir(), 'svc-test-run-'));
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}
