import { sql } from 'kysely';
import { toPage } from '../attribution/reporting/paging';
import { type CreatorRow, creatorFact } from '../placements/facts';
import type { Db } from '../db/database';
import type { Queues } from '../facts';
import type { Logger } from '../logger';
import type { Platform } from '../platforms';
import { markPending, queueOutboxFact } from '../queues/outbox/accept';
import { notFound } from '../refusal';
import { newId } from '../secrets';
import { afterCreatedRow } from './created-order';

const columns = ['id', 'name', 'first_name', 'handles', 'followers', 'created_at'] as const;

export type NewCreator = {
  name: string;
  first_name?: string | null;
  handles?: { platform: Platform; handle: string }[];
  followers?: number | null;
};

/**
 * Records a creator and makes its ClickHouse fact (the Data API's `creators`, joined for
 * names) pending in the outbox in one statement, then queues the fact in the background.
 */
export async function createCreator({ db, queues, log }: { db: Db; queues: Queues; log: Logger }, c: NewCreator) {
  const { rows } = await sql<CreatorRow>`
    WITH recorded AS (
      INSERT INTO creators (id, name, first_name, handles, followers)
      VALUES (${newId()}, ${c.name}, ${c.first_name ?? null}, ${JSON.stringify(c.handles ?? [])}::jsonb, ${c.followers ?? null})
      RETURNING ${sql.join(columns.map((column) => sql.ref(column)))}
    ),
    pending AS ${markPending('creators', 'created_at')}
    SELECT * FROM recorded`.execute(db);
  const creator = rows[0]!;
  queueOutboxFact(queues, log, 'creators', creatorFact(creator));
  return creator;
}

export async function listCreators(db: Db, page: { limit: number; cursor?: [string] }) {
  let q = db.selectFrom('creators').select(columns).orderBy(['created_at', 'id']).limit(page.limit + 1);
  if (page.cursor) q = q.where(afterCreatedRow('creators', page.cursor[0]));
  return toPage(await q.execute(), page.limit, (row) => [row.id]);
}

export async function findCreator(db: Db, id: string) {
  const creator = await db.selectFrom('creators').select(columns).where('id', '=', id).executeTakeFirst();
  if (!creator) throw notFound();
  return creator;
}
