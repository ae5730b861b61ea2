import { z } from 'zod';
import { type ListReader, linkCursor, listLinks } from '../attribution/reporting/lists';
import { pageParams } from '../attribution/reporting/paging';
import { deepLinkSchema } from '../attribution/links/deep-link';
import { route } from '../http/route';
import { createLink, hasStoreUrl, linkItem, STORE_URL_REQUIRED, updateLink } from './attribution-links.queries';
import type { InternalDeps } from './deps';
import { answers, errors, storedUrl } from './schemas';

/**
 * A slug as stored: surrounding spaces and slashes removed, case kept (uniqueness per
 * domain ignores case, see migrations/0005). '' is the domain's root link. Path
 * segments of URL-safe characters only, so the slug reads the same in any URL.
 */
const slugSchema = z
  .string()
  .max(200)
  .transform((s) => s.trim().replace(/^\/+|\/+$/g, ''))
  .pipe(
    z
      .string()
      .max(100)
      .regex(/^([A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*)?$/, 'letters, digits, . _ ~ - and / between segments')
      // Browsers resolve `.` and `..` segments away: such a slug could never be visited.
      .refine((s) => !s.split('/').some((segment) => segment === '.' || segment === '..'), 'no segment may be . or ..'),
  );

const httpUrl = storedUrl();

const createBody = z
  .object({
    brand_id: z.string().min(1),
    creator_id: z.string().min(1),
    domain_id: z.string().min(1),
    slug: slugSchema,
    type: z.enum(['web', 'app']),
    destination_url: httpUrl,
    ios_url: httpUrl.nullish(),
    android_url: httpUrl.nullish(),
    deep_link: deepLinkSchema.nullish(),
  })
  .refine(hasStoreUrl, { message: STORE_URL_REQUIRED, path: ['ios_url'] });

const patchBody = z
  .object({
    active: z.boolean().optional(),
    destination_url: httpUrl.optional(),
    ios_url: httpUrl.nullable().optional(),
    android_url: httpUrl.nullable().optional(),
    deep_link: deepLinkSchema.nullable().optional(),
  })
  .refine((p) => Object.values(p).some((v) => v !== undefined), 'give active, destination_url, ios_url, android_url or deep_link');

const listQuery = z.object({
  brand_id: z.string().optional(),
  creator_id: z.string().optional(),
  ...pageParams(linkCursor),
});

/** Link ids are Postgres bigserials; anything else names no link (404). */
const linkParams = z.object({ id: z.string().regex(/^[1-9]\d{0,14}$/).transform(Number) });

/** /attribution-links (docs/api.md#links-codes-and-domains): creator links with their clicks and ledger totals. */
export const attributionLinkRoutes = (deps: Pick<InternalDeps, 'db' | 'warehouse' | 'linkChanges'>) => {
  const reader: ListReader = deps;
  return [
    route({
      method: 'GET',
      path: '/attribution-links',
      summary: 'Creator links of every brand (or one brand, one creator) with their totals, by id',
      query: listQuery,
      responses: { 200: answers.page('links'), ...errors.read },
      handler: async ({ query: { brand_id, creator_id, ...page } }) => listLinks(reader, { brandId: brand_id, creatorId: creator_id }, page),
    }),
    route({
      method: 'GET',
      path: '/attribution-links/:id',
      summary: 'One link with its totals',
      params: linkParams,
      responses: { 200: answers.item('The link'), ...errors.one },
      handler: async ({ params }) => linkItem(reader, params.id),
    }),
    route({
      method: 'POST',
      path: '/attribution-links',
      summary: "Create a link on a shared domain or on the brand's own",
      body: createBody,
      responses: { 201: answers.item('The link'), ...errors.write, 409: errors.code('slug_taken') },
      async handler({ body }) {
        return createLink(deps, body);
      },
    }),
    route({
      method: 'PATCH',
      path: '/attribution-links/:id',
      summary: 'Change active, destination_url, ios_url, android_url or deep_link (null clears it)',
      params: linkParams,
      body: patchBody,
      responses: { 200: answers.item('The link'), ...errors.write, ...errors.one },
      handler: async ({ params, body }) => updateLink(deps, params.id, body),
    }),
  ];
};
