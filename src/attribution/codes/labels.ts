import { sql, type Transaction } from 'kysely';
import { z } from 'zod';
import type { Database } from '../../db/schema';

/**
 * Creator code labels (docs/api.md#links-codes-and-domains): upper-case, unique per brand, either dictated or
 * generated from the creator's first name (MAYA, then MAYA2, MAYA3… on collision).
 */

export const MAX_LABEL = 32;

/** A dictated label: trimmed and upper-cased; letters A-Z, digits, `-` and `_`. */
export const labelSchema = z
  .string()
  .trim()
  .toUpperCase()
  .regex(new RegExp(`^[A-Z0-9_-]{1,${MAX_LABEL}}$`), `1 to ${MAX_LABEL} letters (A-Z), digits, - or _`);

// Room for a numeric suffix within MAX_LABEL.
const MAX_BASE = 24;

/**
 * The base of a generated label: the creator's first name, else the first word of the
 * name, with accents folded to ASCII and everything but letters and digits dropped
 * ("José-Luis" → JOSELUIS). CODE when neither leaves anything (a name in another script).
 */
export function labelBase(creator: { first_name: string | null; name: string }): string {
  const candidates = [creator.first_name ?? '', creator.name.trim().split(/\s+/)[0] ?? ''];
  for (const candidate of candidates) {
    const base = candidate
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toUpperCase()
      .replace(/[^A-Z0-9]/g, '')
      .slice(0, MAX_BASE);
    if (base) return base;
  }
  return 'CODE';
}

/** The base itself when free, else the base with the smallest free suffix from 2. */
export function firstFreeLabel(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    if (!taken.has(`${base}${n}`)) return `${base}${n}`;
  }
}

/**
 * Serialises label changes of one brand until the transaction ends, so that two
 * concurrent creations cannot pick the same free label.
 */
export async function lockBrandLabels(trx: Transaction<Database>, brandId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`creator_codes:${brandId}`}))`.execute(trx);
}

/** The brand's labels that a generated label from `base` could collide with: BASE and BASE<digits>. */
export async function takenLabels(trx: Transaction<Database>, brandId: string, base: string): Promise<Set<string>> {
  const rows = await trx
    .selectFrom('creator_codes')
    .select('label')
    .where('brand_id', '=', brandId)
    .where(sql<boolean>`label ~ ${`^${base}[0-9]*$`}`)
    .execute();
  return new Set(rows.map((r) => r.label));
}

/** Whether another code of the brand already has this label. */
export async function labelTaken(trx: Transaction<Database>, brandId: string, label: string, exceptId?: string): Promise<boolean> {
  let q = trx.selectFrom('creator_codes').select('id').where('brand_id', '=', brandId).where('label', '=', label);
  if (exceptId) q = q.where('id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}
