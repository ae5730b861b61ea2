import type { Redis } from 'ioredis';
import type { DevicePlatform } from '../links/visitor';

/** How long an app-link click can explain an install from the same IP. */
export const IP_MATCH_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * Recent clicks on a brand's app links by IP hash, for the install IP match (0.6,
 * report-only). One Redis hash per (brand, IP hash) under the queue prefix, one field
 * per device platform (`any` when the click had no user agent), each holding the last
 * clicked link and when. Desktop clicks are not kept: an install comes from a phone.
 */
export class RecentAppClicks {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(brandId: string, ipHash: string): string {
    return `${this.prefix}:recent-app-clicks:${brandId}:${ipHash}`;
  }

  async remember(brandId: string, ipHash: string, platform: DevicePlatform | null, linkId: number): Promise<void> {
    if (!ipHash || platform === 'desktop') return;
    const key = this.key(brandId, ipHash);
    await this.redis
      .multi()
      .hset(key, platform ?? 'any', `${linkId}:${Date.now()}`)
      .pexpire(key, IP_MATCH_WINDOW_MS)
      .exec();
  }

  /** The link of the latest click from this IP hash within the window, on the same platform when the click's is known. */
  async linkFor(brandId: string, ipHash: string, platform: 'ios' | 'android'): Promise<number | null> {
    if (!ipHash) return null;
    const fields = await this.redis.hmget(this.key(brandId, ipHash), platform, 'any');
    const clicks = fields
      .filter((f): f is string => f !== null)
      .map((f) => f.split(':').map(Number) as [number, number])
      .filter(([, at]) => Date.now() - at < IP_MATCH_WINDOW_MS)
      .sort((a, b) => b[1] - a[1]);
    return clicks[0]?.[0] ?? null;
  }
}
