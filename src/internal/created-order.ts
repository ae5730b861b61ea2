import { sql } from 'kysely';
import { z } from 'zod';
import { pageParams } from '../attribution/reporting/paging';

/**
 * Paging of the internal lists of set-up records (brands, creators, campaigns) in the order
 * they were created. The cursor names the last row answered; the next page starts after
 * that row's (created_at, id), read from Postgres, so it is exact to the microsecond.
 */
export const createdOrderPage = pageParams(z.tuple([z.string()]));

export const afterCreatedRow = (table: 'brands' | 'creators' | 'campaigns', id: string) =>
  sql<boolean>`(created_at, id) > (SELECT created_at, id FROM ${sql.table(table)} WHERE id = ${id})`;
