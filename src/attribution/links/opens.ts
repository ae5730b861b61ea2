import type { Db } from '../../db/database';
import { keptInstallId } from '../installs/record';
import { UUID_SHAPED } from '../ledger/types';

/**
 * Opens (docs/api.md, "POST /opens"): an installed app reports the creator link it was opened with.
 * Each is kept in Postgres with the click it recorded, so a purchase recorded a moment later finds
 * it at once, whatever the queues' lag, and is credited to that link for 7 days.
 */

/** How long after an open the install's purchases are credited to the opened link. */
export const OPEN_CREDIT_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * How long an open is kept: the credit window plus 7 days, since a purchase may be recorded days
 * after its occurred_at (a provider retrying a webhook) and still looks back 7 days from then.
 */
export const OPEN_KEEP_MS = OPEN_CREDIT_WINDOW_MS + 7 * 24 * 60 * 60 * 1000;

/** How often each API process deletes opens older than OPEN_KEEP_MS (LinkOpens.purgeExpired). */
export const OPENS_PURGE_EVERY_MS = 10 * 60_000;

/** The part of a link URL an open resolves: host, slug (path, percent-decoded, no leading `/`) and raw query. */
export type OpenedAddress = { domain: string; slug: string; query: string };

const MAX_URL = 8192;
const MAX_SLUG = 2048;

/**
 * The address of an opened URL as the link host reads a visit; 'invalid' when it is not an absolute
 * http(s) URL; null when its path names no link (a path the link host never counts as a click).
 */
export function openedAddress(text: string): OpenedAddress | 'invalid' | null {
  const trimmed = text.trim();
  if (trimmed.length > MAX_URL) return 'invalid';
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return 'invalid';
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !url.hostname) return 'invalid';
  let path: string;
  try {
    path = decodeURIComponent(url.pathname);
  } catch {
    return null;
  }
  if (path.includes('\0') || path === '/robots.txt' || path === '/favicon.ico' || path.startsWith('/.well-known/')) return null;
  return { domain: url.host, slug: path.slice(1, 1 + MAX_SLUG), query: url.search.replace(/^\?/, '') };
}

/** The forms an install id is looked up in: as kept, and a UUID in either case (apps differ in how they print one). */
function installIdForms(text: string | null): string[] {
  const installId = text ? keptInstallId(text) : '';
  if (!installId) return [];
  return UUID_SHAPED.test(installId) ? [...new Set([installId, installId.toLowerCase(), installId.toUpperCase()])] : [installId];
}

export type OpenRecord = { brandId: string; installId: string; platform: 'ios' | 'android'; linkId: number; clickToken: string };

export class LinkOpens {
  constructor(private readonly db: Db) {}

  async record(open: OpenRecord): Promise<void> {
    await this.db
      .insertInto('link_opens')
      // This process's clock, as a purchase's default occurred_at is: one recorded right after finds the open.
      .values({ brand_id: open.brandId, install_id: open.installId, platform: open.platform, link_id: open.linkId, click_token: open.clickToken, opened_at: new Date() })
      .execute();
  }

  /**
   * Deletes opens older than OPEN_KEEP_MS, `batch` rows a statement until none is left (a short
   * lock each); answers how many. No purchase can be credited by them any more.
   */
  async purgeExpired(batch = 1000, now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - OPEN_KEEP_MS);
    let purged = 0;
    for (;;) {
      const expired = this.db.selectFrom('link_opens').select('id').where('opened_at', '<', cutoff).limit(batch);
      const { numDeletedRows } = await this.db.deleteFrom('link_opens').where('id', 'in', expired).executeTakeFirst();
      purged += Number(numDeletedRows);
      if (Number(numDeletedRows) < batch) return purged;
    }
  }

  /**
   * The link and click token of the latest open, by an install this brand has recorded whose id is
   * `externalUserId`, in the 7 days up to `at` (a purchase's occurred_at); null when there is none.
   */
  async creditFor(brandId: string, externalUserId: string | null, at: Date): Promise<{ linkId: number; clickToken: string } | null> {
    const forms = installIdForms(externalUserId);
    if (forms.length === 0) return null;
    const row = await this.db
      .selectFrom('link_opens as o')
      .select(['o.link_id', 'o.click_token'])
      .where('o.brand_id', '=', brandId)
      .where('o.install_id', 'in', forms)
      .where('o.opened_at', '<=', at)
      .where('o.opened_at', '>', new Date(at.getTime() - OPEN_CREDIT_WINDOW_MS))
      // Only an install id the brand has recorded, as for purchase inheritance (docs/api.md).
      .where(({ exists, selectFrom }) =>
        exists(selectFrom('installs as i').select('i.id').where('i.brand_id', '=', brandId).where('i.install_id', 'in', forms)),
      )
      .orderBy('o.opened_at', 'desc')
      .orderBy('o.id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? { linkId: Number(row.link_id), clickToken: row.click_token } : null;
  }
}

/** Purges expired opens 5 s after start and every OPENS_PURGE_EVERY_MS; answers the function that stops it. */
export function startOpensPurge(opens: LinkOpens, onError: (err: unknown) => void): () => void {
  const purge = () => void opens.purgeExpired().catch(onError);
  const first = setTimeout(purge, 5_000).unref();
  const timer = setInterval(purge, OPENS_PURGE_EVERY_MS).unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
