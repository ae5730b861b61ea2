import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { toPage } from '../attribution/reporting/paging';
import { HttpError, notFound } from '../http/errors';
import { PLATFORMS, platformSchema } from '../platforms';
import { hashPassword, newId, newToken, sha256 } from '../secrets';
import type { Services } from '../services';
import { afterCreatedRow, createdOrderPage } from './created-order';

const createBrand = z.object({
  name: z.string().trim().min(1).max(200),
  logo_url: z.url().max(2000).nullish(),
  default_platforms: z.array(platformSchema).min(1).optional(),
});
const createApiKey = z.object({ name: z.string().trim().max(200).nullish() }).default({});
const createPortalUser = z.object({
  email: z.email().max(320),
  password: z.string().min(12).max(1000),
});
const brandParams = z.object({ id: z.string() });
const listQuery = z.object(createdOrderPage);

/** POST /brands, /brands/:id/api-keys, /brands/:id/portal-users (CONTRACT 4). */
export async function brandRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const { db } = services;

  app.post('/brands', async (req, reply) => {
    const body = createBrand.parse(req.body);
    const brand = await db
      .insertInto('brands')
      .values({
        id: newId(),
        name: body.name,
        logo_url: body.logo_url ?? null,
        default_platforms: [...new Set(body.default_platforms ?? PLATFORMS)],
        pixel_key: newToken('pk_', 18),
      })
      .returning(['id', 'name', 'logo_url', 'default_platforms', 'pixel_key', 'created_at'])
      .executeTakeFirstOrThrow();
    return reply.status(201).send(brand);
  });

  app.get('/brands', async (req) => {
    const page = listQuery.parse(req.query);
    let q = db
      .selectFrom('brands')
      .select(['id', 'name', 'logo_url', 'default_platforms', 'created_at'])
      .orderBy(['created_at', 'id'])
      .limit(page.limit + 1);
    if (page.cursor) q = q.where(afterCreatedRow('brands', page.cursor[0]));
    return toPage(await q.execute(), page.limit, (row) => [row.id]);
  });

  app.post('/brands/:id/api-keys', async (req, reply) => {
    const { id } = brandParams.parse(req.params);
    const body = createApiKey.parse(req.body ?? {});
    await findBrand(services, id);
    const key = newToken('sk_', 24);
    const row = await db
      .insertInto('api_keys')
      .values({ id: newId(), brand_id: id, name: body.name ?? null, key_hash: sha256(key), key_prefix: key.slice(0, 7) })
      .returning(['id', 'brand_id', 'name', 'key_prefix', 'created_at'])
      .executeTakeFirstOrThrow();
    // The key itself is answered this once and stored only as its hash.
    return reply.status(201).send({ ...row, key });
  });

  app.post('/brands/:id/portal-users', async (req, reply) => {
    const { id } = brandParams.parse(req.params);
    const body = createPortalUser.parse(req.body);
    await findBrand(services, id);
    const row = await db
      .insertInto('portal_users')
      .values({ id: newId(), brand_id: id, email: body.email.toLowerCase(), password_hash: await hashPassword(body.password) })
      // The unique email decides, also between concurrent requests.
      .onConflict((oc) => oc.column('email').doNothing())
      .returning(['id', 'brand_id', 'email', 'created_at'])
      .executeTakeFirst();
    if (!row) throw new HttpError(409, { error: 'email_taken' });
    return reply.status(201).send(row);
  });
}

async function findBrand({ db }: Services, id: string) {
  const brand = await db.selectFrom('brands').select(['id', 'name']).where('id', '=', id).executeTakeFirst();
  if (!brand) throw notFound();
  return brand;
}
