import { toPage } from '../attribution/reporting/paging';
import type { Db } from '../db/database';
import { invalidRequest } from '../refusal';
import { newId } from '../secrets';
import { afterCreatedRow } from './created-order';

const columns = ['id', 'brand_id', 'name', 'status', 'start_date', 'end_date', 'visible', 'created_at'] as const;

export type NewCampaign = {
  brand_id: string;
  name: string;
  status: string;
  start_date?: string | null;
  end_date?: string | null;
  visible: boolean;
};

/** Creates a campaign of a known brand (422 naming brand_id otherwise). */
export async function createCampaign(db: Db, c: NewCampaign) {
  const brand = await db.selectFrom('brands').select('id').where('id', '=', c.brand_id).executeTakeFirst();
  if (!brand) throw invalidRequest([{ path: 'brand_id', message: 'unknown brand' }]);
  return db
    .insertInto('campaigns')
    .values({
      id: newId(),
      brand_id: c.brand_id,
      name: c.name,
      status: c.status,
      start_date: c.start_date ?? null,
      end_date: c.end_date ?? null,
      visible: c.visible,
    })
    .returning(columns)
    .executeTakeFirstOrThrow();
}

export async function listCampaigns(db: Db, brandId: string | undefined, page: { limit: number; cursor?: [string] }) {
  let q = db.selectFrom('campaigns').select(columns).orderBy(['created_at', 'id']).limit(page.limit + 1);
  if (brandId) q = q.where('brand_id', '=', brandId);
  if (page.cursor) q = q.where(afterCreatedRow('campaigns', page.cursor[0]));
  return toPage(await q.execute(), page.limit, (row) => [row.id]);
}
