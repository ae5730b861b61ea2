import { firstFreeLabel, labelBase, labelTaken, lockBrandLabels, takenLabels } from '../attribution/codes/labels';
import { type ListReader, listCodes } from '../attribution/reporting/lists';
import { newId } from '../secrets';
import { conflict, invalidRequest, notFound, type RefusalDetail } from '../refusal';

/** One code with its totals, or not_found. */
export async function codeItem(deps: ListReader, id: string) {
  const { data } = await listCodes(deps, { ids: [id] }, { limit: 1 });
  if (!data[0]) throw notFound();
  return data[0];
}

/** Creates a code, its label dictated or the first free one from the creator's name; 409 label_taken. */
export async function createCode(deps: ListReader, code: { brand_id: string; creator_id: string; label?: string | null }) {
  const id = await deps.db.transaction().execute(async (trx) => {
    const brand = await trx.selectFrom('brands').select('id').where('id', '=', code.brand_id).executeTakeFirst();
    const creator = await trx.selectFrom('creators').select(['name', 'first_name']).where('id', '=', code.creator_id).executeTakeFirst();
    const problems: RefusalDetail[] = [];
    if (!brand) problems.push({ path: 'brand_id', message: 'unknown brand' });
    if (!creator) problems.push({ path: 'creator_id', message: 'unknown creator' });
    if (problems.length || !creator) throw invalidRequest(problems);

    await lockBrandLabels(trx, code.brand_id);
    let label = code.label;
    if (!label) {
      const base = labelBase(creator);
      label = firstFreeLabel(base, await takenLabels(trx, code.brand_id, base));
    } else if (await labelTaken(trx, code.brand_id, label)) {
      throw conflict('label_taken');
    }
    const row = await trx
      .insertInto('creator_codes')
      .values({ id: newId(), brand_id: code.brand_id, creator_id: code.creator_id, label })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  });
  return codeItem(deps, id);
}

export async function updateCode(deps: ListReader, id: string, patch: { label?: string; active?: boolean }) {
  await deps.db.transaction().execute(async (trx) => {
    const code = await trx.selectFrom('creator_codes').select('brand_id').where('id', '=', id).forUpdate().executeTakeFirst();
    if (!code) throw notFound();
    if (patch.label !== undefined) {
      await lockBrandLabels(trx, code.brand_id);
      if (await labelTaken(trx, code.brand_id, patch.label, id)) throw conflict('label_taken');
    }
    await trx
      .updateTable('creator_codes')
      .set({ ...patch, updated_at: new Date() })
      .where('id', '=', id)
      .execute();
  });
  return codeItem(deps, id);
}

/**
 * Deletes a code only while nothing was credited with it: its counter is
 * zero and no install or ledger row names it. One statement, so a credit committed
 * concurrently (which bumps the counter on the same row) is never lost. 409 code_in_use.
 */
export async function deleteCode({ db }: Pick<ListReader, 'db'>, id: string): Promise<void> {
  const result = await db
    .deleteFrom('creator_codes')
    .where('id', '=', id)
    .where('credited_count', '=', 0)
    .where(({ exists, not, selectFrom }) =>
      not(exists(selectFrom('ledger_events').select('id').whereRef('ledger_events.code_id', '=', 'creator_codes.id'))),
    )
    .where(({ exists, not, selectFrom }) => not(exists(selectFrom('installs').select('id').whereRef('installs.code_id', '=', 'creator_codes.id'))))
    .executeTakeFirst();
  if (result.numDeletedRows > 0n) return;
  const code = await db.selectFrom('creator_codes').select('id').where('id', '=', id).executeTakeFirst();
  if (!code) throw notFound();
  throw conflict('code_in_use');
}
