import { z } from 'zod';
import { errorSchema } from '../../http/openapi';
import { route } from '../../http/route';
import { RepeatedLog } from '../../repeated-log';
import { keptInstallId } from '../installs/record';
import { type LinkOpens, openedAddress } from '../links/opens';
import { PUBLIC_BODY_LIMIT, publicErrors } from './body';
import { refuse } from '../../refusal';
import type { PublicDeps } from './deps';

const openBody = z.object({
  // Read as POST /installs reads it: stripped and cut to 128 characters; missing or blank is refused.
  install_id: z.string().transform(keptInstallId).pipe(z.string().min(1)),
  platform: z
    .string()
    .meta({ description: 'ios or android', examples: ['ios'] })
    .transform((v) => v.trim().toLowerCase())
    .pipe(z.enum(['ios', 'android'])),
  url: z.string(),
});

/**
 * POST /opens (docs/api.md): an installed app opened by a creator link reports the URL. It resolves
 * as the link host resolves a visit, to this brand's links only, and records a click of that link
 * (never a bot's, never IP-matched) through the one click path; the open is kept in Postgres for
 * the 7-day credit of the install's purchases.
 */
export const openRoutes = ({ clicks, opens, log }: Pick<PublicDeps, 'clicks' | 'log'> & { opens: LinkOpens }) => {
  const unrecorded = new RepeatedLog(log, 'error', 'could not record an open; answered 503 unavailable');
  return [
    route({
      method: 'POST',
      path: '/opens',
      summary: 'Report the creator link an installed app was opened with: records its click, answers the deep link',
      public: true,
      auth: 'pixel_key', // 422 invalid_request (not an object), 403 invalid_pixel_key
      limits: ['public_ip'],
      body: openBody,
      fieldCodes: { install_id: 'install_id_required' }, // 422 install_id_required, invalid_platform, invalid_url
      bodyLimit: PUBLIC_BODY_LIMIT,
      responses: {
        200: { description: 'The click the open recorded and where to go: {click_token, deep_link, link {id, domain, slug}}' },
        403: errorSchema('invalid_pixel_key'),
        404: errorSchema('link_not_found'),
        ...publicErrors,
        422: errorSchema('invalid_request (not a JSON object), install_id_required, invalid_platform or invalid_url'),
        503: errorSchema('unavailable'),
      },
      async handler({ body: input, req }, brand) {
        const address = openedAddress(input.url);
        if (address === 'invalid') throw refuse(422, 'invalid_url');
        const link = address ? await clicks.link(address.domain, address.slug) : null;
        if (!link || link.brandId !== brand.id) throw refuse(404, 'link_not_found');
        const header = (name: string) => {
          const value = req.headers[name];
          return typeof value === 'string' ? value : undefined;
        };
        try {
          // The pixel key and the install id vouch for a person; no IP is kept, so no install is IP-matched to it.
          const click = await clicks.record(link, {
            query: address!.query,
            userAgent: header('user-agent'),
            country: header('cf-ipcountry') ?? header('x-country'),
            ip: null,
            bot: false,
            platform: input.platform,
          });
          await opens.record({ brandId: brand.id, installId: input.install_id, platform: input.platform, linkId: link.id, clickToken: click.click_token });
          return { click_token: click.click_token, deep_link: link.deepLink ?? null, link: { id: link.id, domain: link.domain, slug: link.slug } };
        } catch (err) {
          unrecorded.report({ err });
          throw refuse(503, 'unavailable');
        }
      },
    }),
  ];
};
