import { z } from 'zod';
import type { Db } from '../db/database';
import { idParams, route } from '../http/route';
import { PLATFORMS, platformSchema } from '../platforms';
import { createApiKey, createBrand, createPortalUser, listBrands } from './brands.queries';
import { createdOrderPage } from './created-order';
import { answers, errors, storedUrl } from './schemas';

const createBody = z.object({
  name: z.string().trim().min(1).max(200),
  logo_url: storedUrl(2000).nullish(),
  default_platforms: z.array(platformSchema).min(1).optional(),
});
const apiKeyBody = z.object({ name: z.string().trim().max(200).nullish() }).default({});
const portalUserBody = z.object({
  email: z.email().max(320),
  password: z.string().min(12).max(1000),
});
const listQuery = z.object(createdOrderPage);

/** POST /brands, /brands/:id/api-keys, /brands/:id/portal-users (docs/api.md#internal-set-up-endpoints). */
export const brandRoutes = ({ db }: { db: Db }) => [
  route({
    method: 'POST',
    path: '/brands',
    summary: 'Create a brand with its pixel key; default_platforms defaults to every platform',
    body: createBody,
    responses: { 201: answers.item('The brand, with its pixel_key'), ...errors.write },
    async handler({ body }) {
      const brand = await createBrand(db, { ...body, default_platforms: body.default_platforms ?? [...PLATFORMS] });
      return brand;
    },
  }),
  route({
    method: 'GET',
    path: '/brands',
    summary: 'Brands in the order they were created',
    query: listQuery,
    responses: { 200: answers.page('brands'), ...errors.read },
    handler: async ({ query }) => listBrands(db, query),
  }),
  route({
    method: 'POST',
    path: '/brands/:id/api-keys',
    summary: 'Create a Data API key; the key is answered this once',
    params: idParams,
    body: apiKeyBody,
    optionalBody: true,
    responses: { 201: answers.item('The key record and `key`'), ...errors.write, ...errors.one },
    async handler({ params, body }) {
      return createApiKey(db, params.id, body.name ?? null);
    },
  }),
  route({
    method: 'POST',
    path: '/brands/:id/portal-users',
    summary: 'Create a portal login for the brand',
    params: idParams,
    body: portalUserBody,
    responses: { 201: answers.item('The portal user'), ...errors.write, ...errors.one, 409: errors.code('email_taken') },
    async handler({ params, body }) {
      return createPortalUser(db, params.id, body);
    },
  }),
];
