import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { DevicePlatform } from '../links/visitor';

/** How long an app-link click can explain an install from the same IP. */
export const IP_MATCH_WINDOW_MS = 24 * 60 * 60 * 1000;
/** How far after an install's own time (the device's clock) a click may be and still have led to it. */
const DEVICE_CLOCK_SLACK_MS = 60 * 60 * 1000;

/** Default Redis memory of the IP match: at most 64 MiB (IP_MATCH_MEMORY_MB). */
export const DEFAULT_IP_MATCH_BYTES = 64 * 1024 * 1024;

/** One remembered click: 8 bytes of fingerprint, the link id (uint32), the click's time in seconds (uint32). */
const SLOT_BYTES = 16;
/**
 * The table is cut into strings, each made whole on its first write, so Redis holds only
 * chunks in use: 4095 slots, 65,520 bytes, which with Redis's string header fill one 64 KiB
 * allocation exactly (a string of a full 64 KiB would take the next size class, 80 KiB).
 */
const CHUNK_MEMORY = 64 * 1024;
const SLOTS_PER_CHUNK = CHUNK_MEMORY / SLOT_BYTES - 1;
const CHUNK_BYTES = SLOTS_PER_CHUNK * SLOT_BYTES;

// Creates the chunk at its full size first: a string grown by SETRANGE alone may be given twice its length.
const REMEMBER = `if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], string.rep('\\0', tonumber(ARGV[3]))) end
redis.call('SETRANGE', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`;

type Slot = { key: string; offset: number; fingerprint: Buffer };

/**
 * Recent app-link clicks by (brand, IP hash, platform) for the install IP match (the hash is
 * `ipHash`'s, of an IPv6 client's /64: one client's rotating addresses are one key), in a fixed table
 * of 16-byte slots in 64 KiB Redis strings: a flood overwrites older clicks, so memory stays bounded
 * and a match gets rarer but never wrong (docs/operations.md).
 */
export class RecentAppClicks {
  private readonly slots: number;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    memoryBytes = DEFAULT_IP_MATCH_BYTES,
  ) {
    this.slots = Math.max(1, Math.floor(memoryBytes / CHUNK_MEMORY)) * SLOTS_PER_CHUNK;
  }

  private slot(brandId: string, ipHash: string, field: string): Slot {
    const h = createHash('sha256').update(`${brandId}\n${ipHash}\n${field}`).digest();
    const index = h.readUInt32BE(0) % this.slots;
    return {
      key: `${this.prefix}:ip-match:${Math.floor(index / SLOTS_PER_CHUNK)}`,
      offset: (index % SLOTS_PER_CHUNK) * SLOT_BYTES,
      fingerprint: h.subarray(4, 12),
    };
  }

  /** Remembers a click on an app link made `at` (now, but for the demo's click history). */
  async remember(brandId: string, ipHash: string, platform: DevicePlatform | null, linkId: number, at: Date): Promise<void> {
    if (!ipHash || platform === 'desktop' || this.redis.status !== 'ready') return;
    const slot = this.slot(brandId, ipHash, platform ?? 'any');
    const value = Buffer.alloc(SLOT_BYTES);
    slot.fingerprint.copy(value, 0);
    value.writeUInt32BE(linkId >>> 0, 8);
    value.writeUInt32BE(Math.floor(at.getTime() / 1000), 12);
    await this.redis.eval(REMEMBER, 1, slot.key, slot.offset, value, CHUNK_BYTES, IP_MATCH_WINDOW_MS);
  }

  /**
   * The link of the latest click from this IP hash in the window before the install (`installedAt`),
   * on the same platform when the click's is known; null also when Redis is away (the match is skipped).
   */
  async linkFor(brandId: string, ipHash: string, platform: 'ios' | 'android', installedAt: Date): Promise<number | null> {
    if (!ipHash || this.redis.status !== 'ready') return null;
    const slots = [platform, 'any'].map((field) => this.slot(brandId, ipHash, field));
    const pipeline = this.redis.pipeline();
    for (const s of slots) pipeline.getrangeBuffer(s.key, s.offset, s.offset + SLOT_BYTES - 1);
    const results = await pipeline.exec().catch(() => null);
    if (!results) return null;
    // A click after the install did not lead to it; a device clock a little behind the server's is forgiven.
    const installed = installedAt.getTime();
    const clicks = slots
      .map((s, i) => ({ s, value: results[i]?.[1] as Buffer | undefined }))
      .filter(({ s, value }) => value?.length === SLOT_BYTES && value.subarray(0, 8).equals(s.fingerprint))
      .map(({ value }) => ({ linkId: value!.readUInt32BE(8), at: value!.readUInt32BE(12) * 1000 }))
      .filter((c) => installed - c.at < IP_MATCH_WINDOW_MS && c.at - installed <= DEVICE_CLOCK_SLACK_MS)
      .sort((a, b) => b.at - a.at);
    return clicks[0]?.linkId ?? null;
  }
}
