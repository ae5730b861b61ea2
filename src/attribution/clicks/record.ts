import type { Logger } from '../../logger';
import { RepeatedLog } from '../../repeated-log';
import type { Queues } from '../../facts';
import type { RecentAppClicks } from '../installs/ip-clicks';
import { mintClickToken } from '../links/click-token';
import { type ClickLinks, clickedDomain, clickedSlug, type ServedLink } from '../links/resolve';
import {
  androidPackage,
  countryCode,
  type DevicePlatform,
  ipHash,
  platformFromUserAgent,
  type Utm,
  utmFromQuery,
  withQueryParams,
} from '../links/visitor';
import { clickFact } from './fact';

/** A visit to a creator link, as POST /clicks receives it or the link host sees it. */
export type Visit = {
  query?: string | null;
  referrer?: string | null;
  userAgent?: string | null;
  country?: string | null;
  ip?: string | null;
  bot: boolean;
  /** The device's platform when the caller knows it (an app's open), over the user agent's. */
  platform?: DevicePlatform | null;
};

/** Where to send the visitor (the POST /clicks answer, docs/api.md#attribution-api); no click token when the visit was not recorded. */
export type ClickAnswer = {
  redirect_url: string;
  click_token: string | null;
  platform_hint: DevicePlatform | null;
  link_type: 'web' | 'app';
  brand_name: string;
  app: { ios_url: string | null; android_url: string | null; android_package: string | null; fallback_url: string } | null;
};

type Deps = { secretKey: string; queues: Queues; clickLinks: ClickLinks; recentAppClicks: RecentAppClicks; log: Logger };

/**
 * The one click path behind both front doors (POST /clicks and the link host): resolve the
 * link → mint the click token → describe the click → queue it → answer where to send the
 * visitor. A click is accepted once its row is in Redis.
 */
export class ClickRecorder {
  private readonly unremembered: RepeatedLog;

  constructor(private readonly deps: Deps) {
    this.unremembered = new RepeatedLog(deps.log, 'warn', 'could not remember app clicks for the install IP match');
  }

  /** The link serving a visit to `domain`/`slug`: the slug's, else the domain's root link; null when none is active. */
  async link(domain: string, slug: string | null | undefined): Promise<ServedLink | null> {
    const host = clickedDomain(domain);
    return host ? this.deps.clickLinks.forClick(host, clickedSlug(slug)) : null;
  }

  /**
   * Records the click (made `at`: now, but for the demo's click history) and answers with its
   * token; rejects when Redis cannot take the click (nothing recorded).
   */
  async record(link: ServedLink, visit: Visit, at = new Date()): Promise<ClickAnswer & { click_token: string }> {
    const { secretKey, queues, recentAppClicks } = this.deps;
    const token = mintClickToken(secretKey, link.id, { bot: visit.bot });
    const platform = visit.platform ?? platformFromUserAgent(visit.userAgent);
    const utm = utmFromQuery(visit.query);
    // The IP is kept, as a keyed hash only, for people's clicks on app links: it feeds the install IP match.
    const visitorIpHash = link.type === 'app' && !visit.bot ? ipHash(secretKey, visit.ip) : '';
    const click = {
      token,
      platform,
      utm,
      country: countryCode(visit.country),
      referrer: visit.referrer?.slice(0, 2048) ?? '',
      ipHash: visitorIpHash,
      bot: visit.bot,
    };
    const remembered = recentAppClicks.remember(link.brandId, visitorIpHash, platform, link.id, at).catch((err) => this.unremembered.report({ err }));
    await queues.add('clicks', [clickFact(link, click, at)]);
    await remembered;
    return { ...destinations(link, platform, utm, token), click_token: token };
  }

  /** The answer to a visit that is not recorded (HEAD, over a limit, Redis away): the same destinations, no token. */
  unrecorded(link: ServedLink, visit: Visit): ClickAnswer {
    return destinations(link, platformFromUserAgent(visit.userAgent), utmFromQuery(visit.query), null);
  }
}

function destinations(link: ServedLink, platform: DevicePlatform | null, utm: Utm, token: string | null): ClickAnswer {
  // Web pages carry the UTMs and the click token (svc_cid) for the pixel.
  const webUrl = withQueryParams(link.destinationUrl, token ? { ...utm, svc_cid: token } : utm);
  return {
    redirect_url: storeUrl(link, platform) ?? webUrl,
    click_token: token,
    platform_hint: platform,
    link_type: link.type,
    brand_name: link.brandName,
    app:
      link.type === 'app'
        ? { ios_url: link.iosUrl, android_url: link.androidUrl, android_package: androidPackage(link.androidUrl), fallback_url: webUrl }
        : null,
  };
}

/** The app store an app link sends a phone to; null for web links, desktops and missing store URLs. */
function storeUrl(link: ServedLink, platform: DevicePlatform | null): string | null {
  if (link.type !== 'app') return null;
  if (platform === 'ios') return link.iosUrl;
  if (platform === 'android') return link.androidUrl;
  return null;
}
