import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/database';
import { ownDatabase } from '../helpers/harness';

/** A backend terminated while its client is checked out (between a transaction's statements) fails that work, not the process. */
const DATABASE_URL = ownDatabase('disconnect');

describe('createDb', () => {
  it('survives the server ending a checked-out connection, and the next query reconnects', async () => {
    const db = createDb(DATABASE_URL, 2);
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    try {
      const work = db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx);
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
        await new Promise((resolve) => setTimeout(resolve, 200)); // the client is idle but checked out when the end arrives
        await sql`SELECT 1`.execute(trx);
      });
      await expect(work).rejects.toThrow();
      const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(db);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await admin.end();
      await db.destroy();
    }
  });
});
