import { afterAll, describe, expect, it } from 'vitest';
import { createDb, dropDatabase, ensureDatabase } from '../../src/db/database';
import { createLogger } from '../../src/logger';
import { FactChanges, publishFactChanges } from '../../src/warehouse/fact-changes';
import { isolatedEnv } from '../helpers/harness';

/** caughtUp() is what lets a reader see a write's notice as soon as the write is done (test harness settle). */
const { DATABASE_URL } = isolatedEnv('changefeed');
afterAll(() => dropDatabase(DATABASE_URL));

describe('FactChanges.caughtUp', () => {
  it('resolves only after every notice committed before it was taken, and at once when the feed is closed', async () => {
    await ensureDatabase(DATABASE_URL);
    const db = createDb(DATABASE_URL, 4);
    const changes = new FactChanges(DATABASE_URL, createLogger('silent'));
    await changes.start();
    try {
      const start = changes.version('placements', 'b1');
      // The listening session is busy: Postgres holds its notifications until the statement ends.
      const listener = (changes as unknown as { feed: { client: { query(q: string): Promise<unknown> } } }).feed.client;
      const busy = listener.query('SELECT pg_sleep(0.3)');
      await Promise.all(Array.from({ length: 40 }, () => publishFactChanges(db, 'placements', ['b1', 'b2'])));
      expect(changes.version('placements', 'b1')).toBe(start);
      await changes.caughtUp();
      const generation = start.split('.')[0];
      expect(changes.version('placements', 'b1')).toBe(`${generation}.0.40`);
      expect(changes.version('placements', 'b2')).toBe(`${generation}.0.40`);
      expect(changes.version('attribution', 'b1')).toBe(`${generation}.0.0`);
      await busy;

      await changes.close();
      await changes.caughtUp();
      expect(changes.live).toBe(false);
    } finally {
      await changes.close();
      await db.destroy();
    }
  });
});
