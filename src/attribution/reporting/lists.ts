import { z } from 'zod';
import type { Db } from '../../db/database';
import { linksWithDomain } from '../links/queries';
import type { Warehouse } from '../../warehouse/clickhouse';
import { toPage } from './paging';
import { codeTotals, type Money, linkTotals, type TotalsRange } from './totals';

/**
 * Link and code list items with their totals (docs/api.md#links-codes-and-domains), shared by the internal lists
 * (any brand) and the portal's /links and /codes (one brand). A page is read from
 * Postgres first; its totals come from ClickHouse for exactly the ids of that page.
 */

/** The two stores a list reads: rows from Postgres, their totals from ClickHouse. */
export type ListReader = { db: Db; warehouse: Warehouse };
type Page<C> = { limit: number; cursor?: C };

export type LinkFilter = { brandId?: string; creatorId?: string; ids?: number[] };
export type CodeFilter = { brandId?: string; creatorId?: string; ids?: string[] };

export type LinkItem = {
  /**
   * The link's Postgres bigserial as a string: every created object's and every list item's
   * `id` is answered as a string. The install link summary (installs, the ledger feed) names the same link with the integer.
   */
  id: string;
  brand_id: string;
  domain_id: string;
  domain: string;
  slug: string;
  type: 'web' | 'app';
  active: boolean;
  destination_url: string;
  ios_url: string | null;
  android_url: string | null;
  /** Where an installed app opens on this link, or null (docs/api.md). */
  deep_link: string | null;
  creator: { id: string; name: string };
  clicks: number;
  /** Clicks by crawlers, link previews and prefetches: stored, never in `clicks` (docs/link-host.md#bots). */
  bot_clicks: number;
  installs: number;
  conversions: number;
  revenue: Money;
  created_at: Date;
  updated_at: Date;
};

export type CodeItem = {
  id: string;
  brand_id: string;
  label: string;
  active: boolean;
  creator: { id: string; name: string };
  /** Events and installs the code was credited with (kept by the ledger and install recorders). */
  credited_count: number;
  conversions: number;
  revenue: Money;
  created_at: Date;
  updated_at: Date;
};

/** Links by id (creation order). */
export const linkCursor = z.tuple([z.number().int()]);

export async function listLinks({ db, warehouse }: ListReader, filter: LinkFilter, page: Page<z.output<typeof linkCursor>>, range?: TotalsRange) {
  let q = linkRows(db).orderBy('l.id').limit(page.limit + 1);
  if (filter.brandId) q = q.where('l.brand_id', '=', filter.brandId);
  if (filter.creatorId) q = q.where('l.creator_id', '=', filter.creatorId);
  if (filter.ids) q = q.where('l.id', 'in', filter.ids);
  if (page.cursor) q = q.where('l.id', '>', page.cursor[0]);
  const { data, pagination } = toPage(await q.execute(), page.limit, (row) => [row.id]);
  const totals = await linkTotals(warehouse, data, range);
  const items = data.map(({ creator_id, creator_name, ...row }): LinkItem => ({
    ...row,
    id: String(row.id),
    creator: { id: creator_id, name: creator_name },
    ...totals.get(row.id)!,
  }));
  return { data: items, pagination };
}

/** Codes by brand, then label. */
export const codeCursor = z.tuple([z.string(), z.string()]);

export async function listCodes({ db, warehouse }: ListReader, filter: CodeFilter, page: Page<z.output<typeof codeCursor>>, range?: TotalsRange) {
  let q = codeRows(db).orderBy('cc.brand_id').orderBy('cc.label').limit(page.limit + 1);
  if (filter.brandId) q = q.where('cc.brand_id', '=', filter.brandId);
  if (filter.creatorId) q = q.where('cc.creator_id', '=', filter.creatorId);
  if (filter.ids) q = q.where('cc.id', 'in', filter.ids);
  const cursor = page.cursor;
  if (cursor) q = q.where((eb) => eb(eb.refTuple('cc.brand_id', 'cc.label'), '>', eb.tuple(cursor[0], cursor[1])));
  const { data, pagination } = toPage(await q.execute(), page.limit, (row) => [row.brand_id, row.label]);
  const totals = await codeTotals(warehouse, data, range);
  const items = data.map(({ creator_id, creator_name, ...row }): CodeItem => ({
    ...row,
    creator: { id: creator_id, name: creator_name },
    ...totals.get(row.id)!,
  }));
  return { data: items, pagination };
}

function linkRows(db: Db) {
  return linksWithDomain(db)
    .innerJoin('creators as c', 'c.id', 'l.creator_id')
    .select([
      'l.brand_id',
      'l.domain_id',
      'l.type',
      'l.active',
      'l.destination_url',
      'l.ios_url',
      'l.android_url',
      'l.deep_link',
      'l.creator_id',
      'c.name as creator_name',
      'l.created_at',
      'l.updated_at',
    ]);
}

function codeRows(db: Db) {
  return db
    .selectFrom('creator_codes as cc')
    .innerJoin('creators as c', 'c.id', 'cc.creator_id')
    .select([
      'cc.id',
      'cc.brand_id',
      'cc.label',
      'cc.active',
      'cc.creator_id',
      'c.name as creator_name',
      'cc.credited_count',
      'cc.created_at',
      'cc.updated_at',
    ]);
}
