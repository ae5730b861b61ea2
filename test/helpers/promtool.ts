import { spawnSync } from 'node:child_process';

/**
 * Prometheus' own linter, when installed (Debian's `prometheus` package). CI installs it: under CI
 * (or TEST_REQUIRE_PROMTOOL) a missing promtool fails rather than skips.
 */
export const promtoolPresent = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;
export const promtoolRequired = Boolean(process.env.CI || process.env.TEST_REQUIRE_PROMTOOL);

/** `promtool check metrics` on an exposition: its exit code and what it said (problems on stderr). */
export function promtoolCheckMetrics(exposition: string): { status: number | null; output: string } {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
  if (run.error) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}`.trim() };
}
