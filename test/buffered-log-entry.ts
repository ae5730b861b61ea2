// A process that logs as `npm start` does (bufferedLogStream): one line, a pause, then a burst and an
// immediate exit. test/logger.test.ts reads its output.
import { bufferedLogStream, createLogger } from '../src/logger';

const log = createLogger('info', bufferedLogStream());
log.info({ n: 0 }, 'alone');
await new Promise((r) => setTimeout(r, 400));
process.stderr.write('paused\n');
for (let n = 1; n <= 500; n++) log.info({ n }, 'burst');
process.exit(0);
