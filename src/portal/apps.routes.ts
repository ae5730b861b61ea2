import { z } from 'zod';
import { brandApps, brandAppsBody, setBrandApps } from '../attribution/apps/apps';
import type { Db } from '../db/database';
import { route } from '../http/route';
import { answer, errorSchema, readErrors } from './schemas';

const appsAnswer = z.object({
  ios: z
    .object({ team_id: z.string().describe('Apple Developer team id, 10 characters A-Z0-9'), bundle_id: z.string().describe('e.g. com.acme.app') })
    .nullable(),
  android: z
    .object({
      package: z.string().describe('e.g. com.acme.app'),
      sha256_cert_fingerprints: z.array(z.string()).describe('SHA-256 fingerprints of the signing certificates, upper-case AB:CD:… (32 pairs)'),
    })
    .nullable(),
});

/**
 * /apps (docs/api.md, "Apps"): the brand's app identifiers, from which the link host builds the
 * association files on the brand's own domains, so an installed app opens creator links itself.
 */
export const appRoutes = ({ db }: { db: Db }) => [
  route({
    method: 'GET',
    auth: 'session',
    path: '/apps',
    summary: "The brand's iOS and Android app identifiers (null: not set)",
    responses: { 200: appsAnswer, 401: readErrors[401] },
    handler: async (_input, session) => answer(appsAnswer, await brandApps(db, session.brandId)),
  }),
  route({
    method: 'PUT',
    auth: 'session',
    path: '/apps',
    summary: 'Replace both platforms’ app identifiers (an omitted platform is null)',
    body: brandAppsBody,
    responses: { 200: appsAnswer, 401: readErrors[401], 422: errorSchema('invalid_request') },
    handler: async ({ body }, session) => answer(appsAnswer, await setBrandApps(db, session.brandId, body)),
  }),
];
