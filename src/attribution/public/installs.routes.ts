import { z } from 'zod';
import { errorSchema } from '../../http/openapi';
import { route } from '../../http/route';
import { keptInstallId } from '../installs/record';
import { ipHash } from '../links/visitor';
import { occurredAt, optionalText, PUBLIC_BODY_LIMIT, publicErrors } from './body';
import type { PublicDeps } from './deps';

const installBody = z.object({
  // Stripped, then cut to 128 characters; missing or blank is refused.
  install_id: z
    .string()
    .transform(keptInstallId)
    .pipe(z.string().min(1)),
  platform: z
    .string()
    .meta({ description: 'ios or android', examples: ['ios'] })
    .transform((v) => v.trim().toLowerCase())
    .pipe(z.enum(['ios', 'android'])),
  clipboard_token: optionalText(256),
  code: optionalText(64),
  app_version: optionalText(64),
  occurred_at: occurredAt,
});

/**
 * POST /installs (docs/api.md#attribution-api), called by the mobile SDKs: resolve the pixel key →
 * validate → attribute, record once per install ID and queue (InstallRecorder) →
 * 201 for a new install, 200 with `duplicate: true` and the recorded install for a retry.
 */
export const installRoutes = ({ installs, secretKey }: Pick<PublicDeps, 'installs' | 'secretKey'>) => [
  route({
    method: 'POST',
    path: '/installs',
    summary: 'Record an app install from an SDK, attributed to a click, clipboard token or code',
    public: true,
    auth: 'pixel_key', // 422 invalid_request (not an object), 403 invalid_pixel_key
    limits: ['public_ip', 'pixel_key'],
    body: installBody,
    fieldCodes: { install_id: 'install_id_required' }, // 422 install_id_required, invalid_platform
    bodyLimit: PUBLIC_BODY_LIMIT,
    responses: {
      200: { description: 'A retry: {ok, duplicate: true, install} as first recorded' },
      201: { description: '{ok, duplicate: false, install}' },
      403: errorSchema('invalid_pixel_key'),
      ...publicErrors,
    },
    async handler({ body: input, req, reply }, brand) {
      const { duplicate, install } = await installs.record(brand.id, {
        installId: input.install_id,
        platform: input.platform,
        clipboardToken: input.clipboard_token,
        code: input.code,
        appVersion: input.app_version,
        occurredAt: input.occurred_at,
        // The SDK calls us from the device, so the socket address is the device's.
        ipHash: () => ipHash(secretKey, req.ip),
      });
      return reply.status(duplicate ? 200 : 201).send({ ok: true, duplicate, install });
    },
  }),
];
