import type { FastifyRequest } from 'fastify';
import { BoundedMap } from '../bounded-map';
import type { Db } from '../db/database';
import { refuse } from '../refusal';
import { bearerToken, sha256 } from '../secrets';

/** The API key of a request: `Authorization: Bearer`, then `X-SVC-API-Key`, then `?api_key` (docs/api.md#data-api). */
export function apiKeyOf(req: FastifyRequest): string | undefined {
  const bearer = bearerToken(req.headers.authorization);
  if (bearer) return bearer;
  const header = req.headers['x-svc-api-key'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  const query = (req.query as Record<string, unknown> | undefined)?.api_key;
  if (typeof query === 'string' && query) return query;
  return undefined;
}

type Cached = { brandId: string | null; expires: number };

/**
 * Resolves API keys to their brand. Keys are stored as SHA-256 hex; answers (unknown keys
 * too) are cached briefly so a busy client costs Postgres one lookup per TTL, and a revoked
 * key stops working within the TTL. The cache is bounded: the oldest entry makes room.
 */
export class ApiKeys {
  private readonly cache: BoundedMap<string, Cached>;

  constructor(
    private readonly db: Db,
    private readonly ttlMs = 30_000,
    maxEntries = 10_000,
  ) {
    this.cache = new BoundedMap({ maxEntries });
  }

  /**
   * The brand `key` (as `apiKeyOf` reads it) belongs to; 401 when it is missing, unknown or revoked,
   * after `wrongKey` has counted an unknown or revoked one (guessing is limited per client IP).
   */
  async brandIdFor(key: string | undefined, wrongKey?: () => Promise<unknown>): Promise<string> {
    if (!key) throw refuse(401, 'missing_api_key');
    const brandId = await this.lookup(sha256(key));
    if (!brandId) {
      await wrongKey?.().catch(() => {});
      throw refuse(401, 'invalid_api_key');
    }
    return brandId;
  }

  private async lookup(hash: string): Promise<string | null> {
    const now = Date.now();
    const hit = this.cache.get(hash);
    if (hit && hit.expires > now) return hit.brandId;
    const row = await this.db
      .selectFrom('api_keys')
      .select('brand_id')
      .where('key_hash', '=', hash)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    this.cache.set(hash, { brandId: row?.brand_id ?? null, expires: now + this.ttlMs });
    return row?.brand_id ?? null;
  }
}
