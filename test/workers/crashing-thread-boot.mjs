// The workers' thread as workers/thread-boot.mjs starts it, except that the first thread
// of a test process dies of an uncaught exception when asked to drain: its batch is
// then in hand, possibly mid-insert. Threads started after it run normally.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();

const marker = join(workerData.config.dataDir, `crashed-${workerData.config.queuePrefix}`);
if (!existsSync(marker)) {
  writeFileSync(marker, '');
  parentPort.on('message', (message) => {
    if (message.type === 'drain') throw new Error('simulated crash of the workers thread');
  });
}
await import('../../workers/thread.ts');
