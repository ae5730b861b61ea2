import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { toPage } from '../attribution/reporting/paging';
import { HttpError } from '../http/errors';
import { newId } from '../secrets';
import type { Services } from '../services';
import { afterCreatedRow, createdOrderPage } from './created-order';

const createCampaign = z
  .object({
    brand_id: z.string().min(1),
    name: z.string().trim().min(1).max(200),
    status: z.string().trim().min(1).max(50).default('active'),
    start_date: z.iso.date().nullish(),
    end_date: z.iso.date().nullish(),
    visible: z.boolean().default(true),
  })
  .refine((c) => !c.start_date || !c.end_date || c.start_date <= c.end_date, {
    message: 'end_date is before start_date',
    path: ['end_date'],
  });

const listQuery = z.object({ brand_id: z.string().optional(), ...createdOrderPage });

const columns = ['id', 'brand_id', 'name', 'status', 'start_date', 'end_date', 'visible', 'created_at'] as const;

export async function campaignRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const { db } = services;

  app.post('/campaigns', async (req, reply) => {
    const body = createCampaign.parse(req.body);
    const brand = await db.selectFrom('brands').select('id').where('id', '=', body.brand_id).executeTakeFirst();
    if (!brand) throw unknownBrand();
    const campaign = await db
      .insertInto('campaigns')
      .values({
        id: newId(),
        brand_id: body.brand_id,
        name: body.name,
        status: body.status,
        start_date: body.start_date ?? null,
        end_date: body.end_date ?? null,
        visible: body.visible,
      })
      .returning(columns)
      .executeTakeFirstOrThrow();
    return reply.status(201).send(campaign);
  });

  app.get('/campaigns', async (req) => {
    const { brand_id, ...page } = listQuery.parse(req.query);
    let q = db.selectFrom('campaigns').select(columns).orderBy(['created_at', 'id']).limit(page.limit + 1);
    if (brand_id) q = q.where('brand_id', '=', brand_id);
    if (page.cursor) q = q.where(afterCreatedRow('campaigns', page.cursor[0]));
    return toPage(await q.execute(), page.limit, (row) => [row.id]);
  });
}

const unknownBrand = () =>
  new HttpError(422, { error: 'invalid_request', details: [{ path: 'brand_id', message: 'unknown brand' }] });
