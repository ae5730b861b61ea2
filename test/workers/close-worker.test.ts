import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Job, Queue, Worker } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { deleteKeysByPrefix } from '../../src/queues/redis';
import { closeWorker } from '../../workers/close-worker';
import { testRedisUrl } from '../helpers/test-redis';

/** A worker's shutdown: it finishes the jobs in hand, and never hangs on BullMQ's blocking connection. */

const prefix = `close-${randomUUID().slice(0, 8)}`;
const admin = new Redis(testRedisUrl);
const connections: Redis[] = [];
const connection = (opts: RedisOptions = {}) => {
  const c = new Redis(testRedisUrl, { maxRetriesPerRequest: null, ...opts });
  connections.push(c);
  return c;
};
afterAll(async () => {
  await deleteKeysByPrefix(admin, prefix);
  for (const c of [admin, ...connections]) c.disconnect();
});

/** The id of the Redis client blocked in BZPOPMIN for this queue (BullMQ names it `prefix:base64(queue)`). */
async function blockedClientId(queue: string): Promise<string | undefined> {
  const name = `${prefix}:${Buffer.from(queue).toString('base64')}`;
  const line = ((await admin.client('LIST')) as string).split('\n').find((l) => l.includes(` name=${name} `) && l.includes('cmd=bzpopmin'));
  return line ? /\bid=(\d+)/.exec(line)?.[1] : undefined;
}

it('closes a worker whose blocking connection is reconnecting, where BullMQ alone waits for ever', async () => {
  const queue = `q-${randomUUID().slice(0, 8)}`;
  // Ten seconds between a dropped connection and its reconnect: the close below falls in that window.
  const worker = new Worker(queue, async () => {}, { connection: connection({ retryStrategy: () => 10_000 }), prefix });
  let id: string | undefined;
  for (let i = 0; i < 100 && !id; i++) {
    await sleep(20);
    id = await blockedClientId(queue);
  }
  expect(id).toBeDefined();
  // BullMQ's blocking client (its internals: only this test reaches in), to see it start reconnecting.
  const blocking = await (worker as unknown as { backend: { blockingConnection: { client: Promise<Redis> } } }).backend.blockingConnection.client;
  const reconnecting = new Promise((resolve) => blocking.once('reconnecting', resolve));
  // Redis drops the blocking connection (a restart, a failover).
  await admin.client('KILL', 'ID', id!);
  await reconnecting;
  let bullmqClosed = false;
  void worker.close().then(() => {
    bullmqClosed = true;
  });
  const started = Date.now();
  await closeWorker(worker, async () => {});
  expect(Date.now() - started).toBeLessThan(5000);
  // BullMQ's own close is still waiting: without closeWorker, shutdown would hang here.
  expect(bullmqClosed).toBe(false);
  expect(blocking.status).toBe('reconnecting');
  blocking.disconnect();
});

it('finishes the jobs in hand before it returns', async () => {
  const queue = `q-${randomUUID().slice(0, 8)}`;
  const q = new Queue(queue, { connection: connection(), prefix });
  let started!: () => void;
  const running = new Promise<void>((resolve) => { started = resolve; });
  let finished = false;
  const inHand = new Set<Promise<void>>();
  const worker = new Worker(
    queue,
    () => {
      const run = (async () => {
        started();
        await sleep(300);
        finished = true;
      })();
      inHand.add(run);
      return run;
    },
    { connection: connection(), prefix },
  );
  await q.add('slow', {});
  await running;
  await closeWorker(worker, async () => { await Promise.all(inHand); });
  expect(finished).toBe(true);
  expect(await q.getJobCounts('completed', 'active', 'wait')).toEqual({ completed: 1, active: 0, wait: 0 });
  await q.close();
});

it('finishes a job whose fetch was under way when the close began, however long it runs', async () => {
  const queue = `q-${randomUUID().slice(0, 8)}`;
  const q = new Queue(queue, { connection: connection(), prefix });
  await q.add('late', {});
  let fetching!: () => void;
  const inFetch = new Promise<void>((resolve) => {
    fetching = resolve;
  });
  // A fetch stretched to 200 ms (a slow round trip to Redis): the close begins while it is on its way.
  class SlowFetch extends Worker {
    protected override async moveToActive(token: string, name?: string): Promise<Job> {
      fetching();
      await sleep(200);
      return super.moveToActive(token, name);
    }
  }
  const inHand = new Set<Promise<void>>();
  let finished = false;
  const worker = new SlowFetch(
    queue,
    () => {
      const run = sleep(3000).then(() => {
        finished = true;
      });
      inHand.add(run);
      void run.then(() => inHand.delete(run));
      return run;
    },
    { connection: connection(), prefix },
  );
  await inFetch;
  await closeWorker(worker, async () => {
    while (inHand.size > 0) await Promise.allSettled([...inHand]);
  });
  expect(finished).toBe(true);
  await q.close();
});
