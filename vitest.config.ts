import { defineConfig } from 'vitest/config';

// Each test file runs in its own forked process: embedded ClickHouse allows one
// data directory per process, so a file gets its own directory, Postgres
// database and Redis key prefix (see test/helpers/harness.ts).
export default defineConfig({
  test: {
    pool: 'forks',
    isolate: true,
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // How long a finished file's fork may take to stop before Vitest logs "Timeout terminating forks
    // worker" (it stops it regardless). Stopping waits for the main process to take the fork's last
    // reports, which on 2 cores busy with service processes and browsers took over the default 10 s.
    teardownTimeout: 60_000,
    // Polls wait for workers, browsers and restarts: on 2 busy cores a second is not enough.
    expect: { poll: { timeout: 10_000 } },
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    reporters: ['default'],
  },
});
