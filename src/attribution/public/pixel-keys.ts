import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/database';
import { enforceRateLimit, type RateLimiter, type RateLimitKind } from '../../http/rate-limit';
import { bodyObject, type Gate } from '../../http/route';
import { refuse } from '../../refusal';
import { Memo } from '../links/memo';

export type PixelBrand = { id: string; name: string };

declare module '../../http/route' {
  interface Callers {
    /** The brand of the body's public pixel key (auth 'pixel_key'). */
    pixel_key: PixelBrand;
  }
}

/**
 * The gate of auth 'pixel_key' (src/http/route.ts), once the body is read: 422 invalid_request when
 * it is not a JSON object, then the pixel key's limit (a non-blank key, known or not), then its
 * brand or 403 invalid_pixel_key; the fields are read after.
 */
export function pixelKeyGate(pixelKeys: PixelKeys, rateLimiter: RateLimiter): Gate<'pixel_key'> {
  return {
    at: 'handler',
    limits: ['pixel_key'],
    async resolve(req: FastifyRequest, reply: FastifyReply, limits: RateLimitKind[]) {
      const { pixel_key: pixelKey } = bodyObject(req.body);
      if (limits.includes('pixel_key') && typeof pixelKey === 'string' && pixelKey.trim()) {
        await enforceRateLimit(reply, rateLimiter, 'pixel_key', pixelKey.trim());
      }
      return pixelKeys.brandOf(pixelKey);
    },
  };
}

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
