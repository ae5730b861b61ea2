import { chDateTime } from '../../warehouse/values';
import type { ServedLink } from '../links/resolve';
import type { DevicePlatform, Utm } from '../links/visitor';

/** What a click records of its visit once the link is known. */
export type ClickDetails = {
  token: string;
  platform: DevicePlatform | null;
  country: string;
  referrer: string;
  utm: Utm;
  /** Keyed hash of the visitor's IP, for app links only; '' otherwise. */
  ipHash: string;
  /** A crawler's, preview fetcher's or prefetch's visit: stored, never counted or credited. */
  bot: boolean;
};

/** The ClickHouse `clicks` row of an accepted click; its id is the click token. */
export function clickFact(link: ServedLink, click: ClickDetails, at = new Date()) {
  return {
    brand_id: link.brandId,
    link_id: link.id,
    creator_id: link.creatorId,
    click_token: click.token,
    clicked_at: chDateTime(at),
    domain: link.domain,
    slug: link.slug,
    link_type: link.type,
    platform: click.platform ?? '',
    country: click.country,
    referrer: click.referrer,
    ...click.utm,
    ip_hash: click.ipHash,
    bot: click.bot ? 1 : 0,
  };
}

export type ClickFact = ReturnType<typeof clickFact>;
