import type { Db } from '../../db/database';
import { Memo } from '../links/memo';
import { refuse } from '../../refusal';

export type PixelBrand = { id: string; name: string };

/**
 * Pixel keys (`pk_…`) are public and never change for a brand, so found keys are
 * memoised; an unknown key is read again every time (it may belong to a new brand).
 */
export class PixelKeys {
  private readonly memo = new Memo<PixelBrand>(5 * 60_000);

  constructor(private readonly db: Db) {}

  /** The brand of a pixel key, or 403 invalid_pixel_key. */
  async brandOf(pixelKey: unknown): Promise<PixelBrand> {
    const key = typeof pixelKey === 'string' ? pixelKey.trim() : '';
    const brand = key.startsWith('pk_')
      ? await this.memo.get(key, async () => {
          const row = await this.db.selectFrom('brands').select(['id', 'name']).where('pixel_key', '=', key).executeTakeFirst();
          return row ?? null;
        })
      : null;
    if (!brand) throw refuse(403, 'invalid_pixel_key');
    return brand;
  }
}
