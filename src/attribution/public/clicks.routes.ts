import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { chDateTime } from '../../warehouse/values';
import { mintClickToken } from '../links/click-token';
import { clickedDomain, clickedSlug, type ServedLink } from '../links/resolve';
import {
  androidPackage,
  countryCode,
  type DevicePlatform,
  ipHash,
  platformFromUserAgent,
  utmFromQuery,
  withQueryParams,
} from '../links/visitor';
import { bodyObject, optionalText, parseFields, PUBLIC_BODY_LIMIT, refuse } from './body';
import type { PublicDeps } from './index';

const clickBody = z.object({
  domain: optionalText(253),
  slug: optionalText(2048),
  query: optionalText(8192),
  referrer: optionalText(2048),
  user_agent: optionalText(1024),
  country: optionalText(16),
  ip: optionalText(64),
});

/**
 * POST /clicks (SPEC 4.2), called by the redirect application, no authentication:
 * resolve the link → mint a click token → describe the click → queue it → answer
 * where to send the visitor. A click is accepted once its row is in Redis.
 */
export async function clickRoutes(app: FastifyInstance, deps: PublicDeps) {
  const { services, clickLinks, recentAppClicks } = deps;
  const { queues, config, log } = services;

  app.post('/clicks', { bodyLimit: PUBLIC_BODY_LIMIT }, async (req) => {
    const body = parseFields(clickBody, bodyObject(req.body));

    // 1. Resolve: domain without www. and slug, falling back to the root link; inactive links are not served.
    const domain = body.domain ? clickedDomain(body.domain) : null;
    const link = domain ? await clickLinks.forClick(domain, clickedSlug(body.slug)) : null;
    if (!link) throw refuse(404, 'link_not_found');

    // 2. Mint the click token and describe the click.
    const clickToken = mintClickToken(config.secretKey, link.id);
    const platform = platformFromUserAgent(body.user_agent);
    const utm = utmFromQuery(body.query);
    // The IP is kept, as a keyed hash only, for app links: it feeds the install IP match.
    const visitorIpHash = link.type === 'app' ? ipHash(config.secretKey, body.ip) : '';
    const click = {
      brand_id: link.brandId,
      link_id: link.id,
      creator_id: link.creatorId,
      click_token: clickToken,
      clicked_at: chDateTime(new Date()),
      domain: link.domain,
      slug: link.slug,
      link_type: link.type,
      platform: platform ?? '',
      country: countryCode(body.country),
      referrer: body.referrer ?? req.headers.referer?.slice(0, 2048) ?? '',
      ...utm,
      ip_hash: visitorIpHash,
    };

    // 3. Queue the click (durable once in Redis) and remember app clicks for the IP match.
    const remembered = recentAppClicks.remember(link.brandId, visitorIpHash, platform, link.id).catch((err) => {
      log.warn({ err }, 'could not remember an app click for the install IP match');
    });
    try {
      await queues.add('clicks', [click]);
    } catch (err) {
      // Without Redis a click cannot be kept: refuse rather than answer for a lost click.
      log.error({ err }, 'could not queue a click');
      throw refuse(503, 'unavailable');
    }
    await remembered;

    // 4. Answer the destination: web pages carry the UTMs and the click token (svc_cid) for the pixel.
    const webUrl = withQueryParams(link.destinationUrl, { ...utm, svc_cid: clickToken });
    return {
      redirect_url: storeUrl(link, platform) ?? webUrl,
      click_token: clickToken,
      platform_hint: platform,
      link_type: link.type,
      brand_name: link.brandName,
      app:
        link.type === 'app'
          ? {
              ios_url: link.iosUrl,
              android_url: link.androidUrl,
              android_package: androidPackage(link.androidUrl),
              fallback_url: webUrl,
            }
          : null,
    };
  });
}

/** The app store an app link sends a phone to; null for web links, desktops and missing store URLs. */
function storeUrl(link: ServedLink, platform: DevicePlatform | null): string | null {
  if (link.type !== 'app') return null;
  if (platform === 'ios') return link.iosUrl;
  if (platform === 'android') return link.androidUrl;
  return null;
}
