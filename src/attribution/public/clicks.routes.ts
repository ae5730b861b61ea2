import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { enforceRateLimits } from '../../http/rate-limit';
import { isBotVisit } from '../clicks/bots';
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
 * POST /clicks (SPEC 4.2), called by a redirect application of the brand's own, no
 * authentication. The service's own link host (src/attribution/link-host) is the other
 * front door to the same ClickRecorder.
 */
export async function clickRoutes(app: FastifyInstance, deps: PublicDeps) {
  const { services, clicks } = deps;
  const { log } = services;

  app.post('/clicks', { bodyLimit: PUBLIC_BODY_LIMIT }, async (req, reply) => {
    await enforceRateLimits(reply, services.rateLimiter, [['public_ip', req.ip]]); // 429 rate_limited (CONTRACT 10)
    const body = parseFields(clickBody, bodyObject(req.body));
    const link = body.domain ? await clicks.link(body.domain, body.slug) : null;
    if (!link) throw refuse(404, 'link_not_found');
    const visit = {
      query: body.query,
      referrer: body.referrer ?? req.headers.referer,
      userAgent: body.user_agent,
      country: body.country,
      ip: body.ip,
      bot: isBotVisit(body.user_agent),
    };
    try {
      return await clicks.record(link, visit);
    } catch (err) {
      // Without Redis a click cannot be kept: refuse rather than answer for a lost click.
      log.error({ err }, 'could not queue a click');
      throw refuse(503, 'unavailable');
    }
  });
}
