import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { linkCursor, listLinks } from '../attribution/reporting/lists';
import { pageParams } from '../attribution/reporting/paging';
import { HttpError, notFound } from '../http/errors';
import type { Services } from '../services';

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
      .regex(/^([A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*)?$/, 'letters, digits, . _ ~ - and / between segments'),
  );

const httpUrl = z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).max(2048);

const STORE_URL_REQUIRED = 'an app link needs ios_url or android_url';
const hasStoreUrl = (l: { type: string; ios_url?: string | null; android_url?: string | null }) =>
  l.type !== 'app' || Boolean(l.ios_url || l.android_url);

const createLink = z
  .object({
    brand_id: z.string().min(1),
    creator_id: z.string().min(1),
    domain_id: z.string().min(1),
    slug: slugSchema,
    type: z.enum(['web', 'app']),
    destination_url: httpUrl,
    ios_url: httpUrl.nullish(),
    android_url: httpUrl.nullish(),
  })
  .refine(hasStoreUrl, { message: STORE_URL_REQUIRED, path: ['ios_url'] });

const patchLink = z
  .object({
    active: z.boolean().optional(),
    destination_url: httpUrl.optional(),
    ios_url: httpUrl.nullable().optional(),
    android_url: httpUrl.nullable().optional(),
  })
  .refine((p) => Object.values(p).some((v) => v !== undefined), 'give active, destination_url, ios_url or android_url');

const listQuery = z.object({
  brand_id: z.string().optional(),
  creator_id: z.string().optional(),
  ...pageParams(linkCursor),
});

/** /attribution-links (SPEC 4.5): creator links with their clicks and ledger totals. */
export async function attributionLinkRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const { db } = services;

  app.get('/attribution-links', async (req) => {
    const { brand_id, creator_id, ...page } = listQuery.parse(req.query);
    return listLinks(services, { brandId: brand_id, creatorId: creator_id }, page);
  });

  app.get('/attribution-links/:id', async (req) => linkItem(services, linkId(req.params)));

  app.post('/attribution-links', async (req, reply) => {
    const body = createLink.parse(req.body);
    const id = await db.transaction().execute(async (trx) => {
      const brand = await trx.selectFrom('brands').select('id').where('id', '=', body.brand_id).executeTakeFirst();
      const creator = await trx.selectFrom('creators').select('id').where('id', '=', body.creator_id).executeTakeFirst();
      // Key-share lock: the domain cannot be removed before this link is committed (removeDomain).
      const domain = await trx
        .selectFrom('domains')
        .select('brand_id')
        .where('id', '=', body.domain_id)
        .forKeyShare()
        .executeTakeFirst();
      const problems = [];
      if (!brand) problems.push({ path: 'brand_id', message: 'unknown brand' });
      if (!creator) problems.push({ path: 'creator_id', message: 'unknown creator' });
      if (!domain) problems.push({ path: 'domain_id', message: 'unknown domain' });
      else if (domain.brand_id !== null && domain.brand_id !== body.brand_id) {
        problems.push({ path: 'domain_id', message: "another brand's custom domain" });
      }
      if (problems.length) throw new HttpError(422, { error: 'invalid_request', details: problems });
      const row = await trx
        .insertInto('links')
        .values({
          brand_id: body.brand_id,
          creator_id: body.creator_id,
          domain_id: body.domain_id,
          slug: body.slug,
          type: body.type,
          destination_url: body.destination_url,
          ios_url: body.ios_url ?? null,
          android_url: body.android_url ?? null,
        })
        // The only unique keys besides the serial id are the domain's slugs.
        .onConflict((oc) => oc.doNothing())
        .returning('id')
        .executeTakeFirst();
      if (!row) throw new HttpError(409, { error: 'slug_taken' });
      return row.id;
    });
    services.linkChanges.changed(); // this process serves the new link at once
    return reply.status(201).send(await linkItem(services, id));
  });

  app.patch('/attribution-links/:id', async (req) => {
    const id = linkId(req.params);
    const patch = patchLink.parse(req.body);
    await db.transaction().execute(async (trx) => {
      const link = await trx
        .selectFrom('links')
        .select(['type', 'ios_url', 'android_url'])
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      if (!link) throw notFound();
      if (!hasStoreUrl({ ...link, ...patch })) {
        throw new HttpError(422, { error: 'invalid_request', details: [{ path: 'ios_url', message: STORE_URL_REQUIRED }] });
      }
      await trx
        .updateTable('links')
        .set({ ...patch, updated_at: new Date() })
        .where('id', '=', id)
        .execute();
    });
    services.linkChanges.changed();
    return linkItem(services, id);
  });
}

const linkParams = z.object({ id: z.string() });

/** Link ids are Postgres bigserials; anything else names no link. */
function linkId(params: unknown): number {
  const { id } = linkParams.parse(params);
  if (!/^[1-9]\d{0,14}$/.test(id)) throw notFound();
  return Number(id);
}

async function linkItem(services: Services, id: number) {
  const { data } = await listLinks(services, { ids: [id] }, { limit: 1 });
  if (!data[0]) throw notFound();
  return data[0];
}
