import { setTimeout as sleep } from 'node:timers/promises';
import type { Worker } from 'bullmq';

/** How long a closing worker with no job left in hand still waits for BullMQ's own close. */
const LEFT_CLOSING_MS = 2_000;

/**
 * Closes a BullMQ worker: it takes no more jobs and finishes those in hand (`idle` resolves once
 * none is). BullMQ's close can wait forever when its blocking connection is closed mid-reconnect
 * (ioredis then never reports it ended), so it is given LEFT_CLOSING_MS past `idle`, then left
 * once the jobs in hand (a late fetch's included) are done.
 */
export async function closeWorker(worker: Worker, idle: () => Promise<void>): Promise<void> {
  const closing = worker.close();
  const closed = new AbortController();
  const leftClosing = (async () => {
    await idle();
    await sleep(LEFT_CLOSING_MS, undefined, { signal: closed.signal }).catch(() => {});
    // A job whose fetch was under way when the close began has started by now: it finishes too.
    await idle();
  })();
  try {
    await Promise.race([closing, leftClosing]);
  } finally {
    closed.abort(); // no timer outlives a close that finished
  }
}
