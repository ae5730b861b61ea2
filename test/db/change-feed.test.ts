import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/database';
import { createLogger } from '../../src/logger';
import { factChanges, publishFactChanges } from '../../src/reads/changes';
import { ownDatabase } from '../helpers/harness';

/** caughtUp() is what lets a reader see a write's notice as soon as the write is done (test harness settle). */
const DATABASE_URL = ownDatabase('changefeed');

describe('fact changes feed', () => {
  it('resolves only after every notice committed before it was taken, and at once when the connection is lost or the feed closed', async () => {
    const db = createDb(DATABASE_URL, 4);
    const changes = factChanges(DATABASE_URL, createLogger('silent'));
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

      // The connection lost while a marker is on its way: caches read through, so it is caught up.
      const held = listener.query('SELECT pg_sleep(5)').catch(() => {});
      const waiting = changes.caughtUp();
      await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'svc-change-feed:fact_changes' AND datname = current_database()`.execute(db);
      await expect(waiting).resolves.toBeUndefined();
      expect(changes.live).toBe(false);
      await held;

      await changes.close();
      await changes.caughtUp();
    } finally {
      await changes.close();
      await db.destroy();
    }
  });

  it("takes a notice naming no area (an older trigger's) as a change of every brand in every area", async () => {
    const db = createDb(DATABASE_URL, 1);
    const changes = factChanges(DATABASE_URL, createLogger('silent'));
    await changes.start();
    try {
      const before = [changes.version('placements', 'b9'), changes.version('attribution', 'b9')];
      await sql`SELECT pg_notify('fact_changes', '')`.execute(db);
      await changes.caughtUp();
      const after = [changes.version('placements', 'b9'), changes.version('attribution', 'b9')];
      expect(after[0]).not.toBe(before[0]);
      expect(after[1]).not.toBe(before[1]);
    } finally {
      await changes.close();
      await db.destroy();
    }
  });
});
