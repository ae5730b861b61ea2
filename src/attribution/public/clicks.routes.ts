import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { trustedProxies } from '../../client-address';
import { errorSchema } from '../../http/openapi';
import { route } from '../../http/route';
import { RepeatedLog } from '../../repeated-log';
import { isBotVisit } from '../clicks/bots';
import { optionalText, PUBLIC_BODY_LIMIT, publicErrors } from './body';
import { refuse } from '../../refusal';
import type { PublicDeps } from './deps';

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
 * POST /clicks (docs/api.md#attribution-api), called by a redirect application of the brand's own, no
 * authentication. The service's own link host (src/attribution/link-host) is the other
 * front door to the same ClickRecorder.
 */
export const clickRoutes = ({ clicks, log, trustProxy }: Pick<PublicDeps, 'clicks' | 'log' | 'trustProxy'>) => {
  const unqueued = new RepeatedLog(log, 'error', 'could not queue clicks; answered 503 unavailable');
  const trusted = trustedProxies(trustProxy);
  // Only a caller TRUST_PROXY lists (with every hop in between) may name the visitor's IP: anyone
  // else could plant an address and win the install IP match of whoever installs from it. A
  // trusted caller's own address is not a visitor's; anyone else's is.
  const visitorIp = (req: FastifyRequest, named: string | null | undefined) =>
    (req.ips ?? [req.socket.remoteAddress]).every(trusted) ? (named ?? undefined) : req.ip;
  return [
    route({
      method: 'POST',
      path: '/clicks',
      summary: "Record a click on a brand's link, from the brand's own redirect application",
      public: true,
      limits: ['public_ip'],
      body: clickBody,
      bodyLimit: PUBLIC_BODY_LIMIT,
      responses: { 200: { description: 'Where to send the visitor: {redirect_url, click_token, platform_hint, link_type, brand_name, app}' }, ...publicErrors, 404: errorSchema('link_not_found'), 503: errorSchema('unavailable') },
      async handler({ body, req }) {
        const link = body.domain ? await clicks.link(body.domain, body.slug) : null;
        if (!link) throw refuse(404, 'link_not_found');
        const visit = {
          query: body.query,
          referrer: body.referrer ?? req.headers.referer,
          userAgent: body.user_agent,
          country: body.country,
          ip: visitorIp(req, body.ip),
          bot: isBotVisit(body.user_agent),
        };
        try {
          return await clicks.record(link, visit);
        } catch (err) {
          // Without Redis a click cannot be kept: refuse rather than answer for a lost click.
          unqueued.report({ err });
          throw refuse(503, 'unavailable');
        }
      },
    }),
  ];
};
