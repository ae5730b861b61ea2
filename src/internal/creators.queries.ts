import { toPage } from '../attribution/reporting/paging';
import { mirrorCreators } from '../data-api/creator-mirror';
import type { Db } from '../db/database';
import type { Platform } from '../platforms';
import { notFound } from '../refusal';
import { newId } from '../secrets';
import type { Warehouse } from '../warehouse/clickhouse';
import { afterCreatedRow } from './created-order';

const columns = ['id', 'name', 'first_name', 'handles', 'followers', 'created_at'] as const;

export type NewCreator = {
  name: string;
  first_name?: string | null;
  handles?: { platform: Platform; handle: string }[];
  followers?: number | null;
};

export async function createCreator({ db, warehouse }: { db: Db; warehouse: Warehouse }, c: NewCreator) {
  const id = newId();
  // The Data API sorts and names creators in ClickHouse: mirror first (see mirrorCreators).
  await mirrorCreators(warehouse, [{ id, name: c.name, handles: c.handles ?? [], followers: c.followers ?? null }]);
  return db
    .insertInto('creators')
    .values({
      id,
      name: c.name,
      first_name: c.first_name ?? null,
      handles: JSON.stringify(c.handles ?? []),
      followers: c.followers ?? null,
    })
    .returning(columns)
    .executeTakeFirstOrThrow();
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
