import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { closeServices, createServices, migrate } from '../../src/services';
import { startWorkerThread } from '../../workers';

/**
 * The workers part of `npm start` (src/main.ts) with the crashing boot of
 * crashing-thread-boot.mjs, for test/workers/thread.test.ts: configured by the environment,
 * it prints `consuming` once the thread consumes, drains on SIGUSR2 (the first thread
 * crashes there) and ends the process with the thread's exit code when the thread dies.
 */
const config = loadConfig();
const log = createLogger(config.logLevel);
const services = await createServices(config, log);
await migrate(services);
const workers = await startWorkerThread(config, log, {
  boot: new URL('./crashing-thread-boot.mjs', import.meta.url),
  onExit: (code) => {
    console.log(`workers thread exited with ${code}`);
    process.exit(code);
  },
});
console.log('consuming');
process.on('SIGUSR2', () => void workers.drain());
process.once('SIGTERM', async () => {
  await workers.close();
  await closeServices(services);
  process.exit(0);
});
