import type { Db } from '../db/database';
import { forbidden, notFound } from '../refusal';

/** The brand's own custom domain `id`; 403 for a shared one, 404 for any other (another brand's, unknown). */
export async function ownDomain(db: Db, id: string, brandId: string) {
  const row = await db
    .selectFrom('domains')
    .selectAll()
    .where('id', '=', id)
    .where((eb) => eb.or([eb('brand_id', '=', brandId), eb('brand_id', 'is', null)]))
    .executeTakeFirst();
  if (!row) throw notFound();
  if (row.brand_id === null) throw forbidden();
  return row;
}
