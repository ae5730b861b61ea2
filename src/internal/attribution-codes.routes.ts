import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { firstFreeLabel, labelBase, labelSchema, labelTaken, lockBrandLabels, takenLabels } from '../attribution/codes/labels';
import { codeCursor, listCodes } from '../attribution/reporting/lists';
import { pageParams } from '../attribution/reporting/paging';
import { HttpError, notFound } from '../http/errors';
import { newId } from '../secrets';
import type { Services } from '../services';

const createCode = z.object({
  brand_id: z.string().min(1),
  creator_id: z.string().min(1),
  label: labelSchema.nullish(),
});

const patchCode = z
  .object({ label: labelSchema.optional(), active: z.boolean().optional() })
  .refine((p) => p.label !== undefined || p.active !== undefined, 'give label or active');

const listQuery = z.object({
  brand_id: z.string().optional(),
  creator_id: z.string().optional(),
  ...pageParams(codeCursor),
});

const codeParams = z.object({ id: z.string() });

const labelTakenError = () => new HttpError(409, { error: 'label_taken' });

/** /attribution-codes (SPEC 4.5): creator codes, dictated or generated, with their ledger totals. */
export async function attributionCodeRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const { db } = services;

  app.get('/attribution-codes', async (req) => {
    const { brand_id, creator_id, ...page } = listQuery.parse(req.query);
    return listCodes(services, { brandId: brand_id, creatorId: creator_id }, page);
  });

  app.get('/attribution-codes/:id', async (req) => codeItem(services, codeParams.parse(req.params).id));

  app.post('/attribution-codes', async (req, reply) => {
    const body = createCode.parse(req.body);
    const id = await db.transaction().execute(async (trx) => {
      const brand = await trx.selectFrom('brands').select('id').where('id', '=', body.brand_id).executeTakeFirst();
      const creator = await trx
        .selectFrom('creators')
        .select(['name', 'first_name'])
        .where('id', '=', body.creator_id)
        .executeTakeFirst();
      const problems = [];
      if (!brand) problems.push({ path: 'brand_id', message: 'unknown brand' });
      if (!creator) problems.push({ path: 'creator_id', message: 'unknown creator' });
      if (problems.length || !creator) throw new HttpError(422, { error: 'invalid_request', details: problems });

      await lockBrandLabels(trx, body.brand_id);
      let label = body.label;
      if (!label) {
        const base = labelBase(creator);
        label = firstFreeLabel(base, await takenLabels(trx, body.brand_id, base));
      } else if (await labelTaken(trx, body.brand_id, label)) {
        throw labelTakenError();
      }
      const row = await trx
        .insertInto('creator_codes')
        .values({ id: newId(), brand_id: body.brand_id, creator_id: body.creator_id, label })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    });
    return reply.status(201).send(await codeItem(services, id));
  });

  app.patch('/attribution-codes/:id', async (req) => {
    const { id } = codeParams.parse(req.params);
    const patch = patchCode.parse(req.body);
    await db.transaction().execute(async (trx) => {
      const code = await trx.selectFrom('creator_codes').select('brand_id').where('id', '=', id).forUpdate().executeTakeFirst();
      if (!code) throw notFound();
      if (patch.label !== undefined) {
        await lockBrandLabels(trx, code.brand_id);
        if (await labelTaken(trx, code.brand_id, patch.label, id)) throw labelTakenError();
      }
      await trx
        .updateTable('creator_codes')
        .set({ ...patch, updated_at: new Date() })
        .where('id', '=', id)
        .execute();
    });
    return codeItem(services, id);
  });

  /**
   * Deletes a code only while nothing was credited with it (SPEC 3.2): its counter is
   * zero and no install or ledger row names it. One statement, so a credit committed
   * concurrently (which bumps the counter on the same row) is never lost.
   */
  app.delete('/attribution-codes/:id', async (req, reply) => {
    const { id } = codeParams.parse(req.params);
    const result = await db
      .deleteFrom('creator_codes')
      .where('id', '=', id)
      .where('credited_count', '=', 0)
      .where(({ exists, not, selectFrom }) =>
        not(exists(selectFrom('ledger_events').select('id').whereRef('ledger_events.code_id', '=', 'creator_codes.id'))),
      )
      .where(({ exists, not, selectFrom }) =>
        not(exists(selectFrom('installs').select('id').whereRef('installs.code_id', '=', 'creator_codes.id'))),
      )
      .executeTakeFirst();
    if (result.numDeletedRows > 0n) return reply.status(204).send();
    const code = await db.selectFrom('creator_codes').select('id').where('id', '=', id).executeTakeFirst();
    if (!code) throw notFound();
    throw new HttpError(409, { error: 'code_in_use' });
  });
}

async function codeItem(services: Services, id: string) {
  const { data } = await listCodes(services, { ids: [id] }, { limit: 1 });
  if (!data[0]) throw notFound();
  return data[0];
}
