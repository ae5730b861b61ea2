import type { Db } from '../db/database';

/** The brand's public pixel key (GET /setup is the only answer that holds it). */
export async function pixelKeyOf(db: Db, brandId: string): Promise<string> {
  const brand = await db.selectFrom('brands').select('pixel_key').where('id', '=', brandId).executeTakeFirstOrThrow();
  return brand.pixel_key;
}
