import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { toPage } from '../attribution/reporting/paging';
import { mirrorCreators } from '../data-api/creator-mirror';
import { notFound } from '../http/errors';
import { platformSchema } from '../platforms';
import { newId } from '../secrets';
import type { Services } from '../services';
import { afterCreatedRow, createdOrderPage } from './created-order';

const handleSchema = z.object({ platform: platformSchema, handle: z.string().trim().min(1).max(200) });
const createCreator = z.object({
  name: z.string().trim().min(1).max(200),
  first_name: z.string().trim().min(1).max(100).nullish(),
  handles: z.array(handleSchema).max(20).optional(),
  followers: z.number().int().min(0).nullish(),
});
const creatorParams = z.object({ id: z.string() });
const listQuery = z.object(createdOrderPage);

const columns = ['id', 'name', 'first_name', 'handles', 'followers', 'created_at'] as const;

/** Creators are shared by brands: a creator may post for several of them. */
export async function creatorRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const { db } = services;

  app.post('/creators', async (req, reply) => {
    const body = createCreator.parse(req.body);
    const id = newId();
    // The Data API sorts and names creators in ClickHouse: mirror first (see mirrorCreators).
    await mirrorCreators(services.warehouse, [
      { id, name: body.name, handles: body.handles ?? [], followers: body.followers ?? null },
    ]);
    const creator = await db
      .insertInto('creators')
      .values({
        id,
        name: body.name,
        first_name: body.first_name ?? null,
        handles: JSON.stringify(body.handles ?? []),
        followers: body.followers ?? null,
      })
      .returning(columns)
      .executeTakeFirstOrThrow();
    return reply.status(201).send(creator);
  });

  app.get('/creators', async (req) => {
    const page = listQuery.parse(req.query);
    let q = db.selectFrom('creators').select(columns).orderBy(['created_at', 'id']).limit(page.limit + 1);
    if (page.cursor) q = q.where(afterCreatedRow('creators', page.cursor[0]));
    return toPage(await q.execute(), page.limit, (row) => [row.id]);
  });

  app.get('/creators/:id', async (req) => {
    const { id } = creatorParams.parse(req.params);
    const creator = await db.selectFrom('creators').select(columns).where('id', '=', id).executeTakeFirst();
    if (!creator) throw notFound();
    return creator;
  });
}
