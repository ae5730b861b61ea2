import { sql } from 'kysely';
import { BrandChanges, EVERY_BRAND } from '../db/brand-changes';
import type { Db } from '../db/database';
import type { Logger } from '../logger';

/** What a cached read counts: the Data API's placements (and creators), or attribution facts (clicks, installs, ledger rows). */
export type FactArea = 'placements' | 'attribution';

const CHANNEL = 'fact_changes';
/** Postgres refuses a NOTIFY payload of 8,000 bytes: brand ids go out in groups. */
const BRANDS_PER_NOTIFICATION = 100;

/**
 * Tells every API process that these brands' facts of `area` are now queryable: the writers call
 * it once ClickHouse has a batch. One statement, one notification per group of brands.
 */
export async function publishFactChanges(db: Db, area: FactArea, brandIds: Iterable<string> | 'every brand'): Promise<void> {
  const ids = brandIds === 'every brand' ? [EVERY_BRAND] : [...new Set(brandIds)];
  const payloads: string[] = [];
  for (let i = 0; i < ids.length; i += BRANDS_PER_NOTIFICATION) payloads.push(`${area} ${ids.slice(i, i + BRANDS_PER_NOTIFICATION).join(',')}`);
  if (payloads.length === 0) return;
  await sql`SELECT pg_notify(${CHANNEL}, payload) FROM unnest(${payloads}::text[]) AS payload`.execute(db);
}

/** Which brands' facts have landed, per area: the writers' notifications (see BrandChanges). */
export type FactChanges = BrandChanges<FactArea>;

export function factChanges(databaseUrl: string, log: Logger): FactChanges {
  return new BrandChanges(databaseUrl, CHANNEL, ['placements', 'attribution'], log);
}
