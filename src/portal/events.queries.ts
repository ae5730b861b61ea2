import { z } from 'zod';
import { EARLIEST_INSTANT, LATEST_INSTANT } from '../recordable-time';
import { ledgerCounts } from '../attribution/reporting/counts';
import { ledgerItem, type LedgerItemRow } from '../attribution/reporting/ledger-item';
import { toPage } from '../attribution/reporting/paging';
import { linksWithDomain } from '../attribution/links/queries';
import type { ListReader } from '../attribution/reporting/lists';
import type { Db } from '../db/database';
import type { DateRange } from './range';

/**
 * The brand's ledger feed, newest first, from ClickHouse (a short read of one key range). The
 * cursor is the unique (occurred_at, id) of the last row answered, so pages never skip or repeat;
 * links and creators are named from Postgres, for this page's ids only.
 */

/**
 * Milliseconds since the epoch and ledger id of the last row of the previous page. The instant
 * is one a ledger row can carry (1970 to 2099): beyond, ClickHouse's DateTime64 would refuse it.
 */
export const eventCursor = z.tuple([z.number().int().min(EARLIEST_INSTANT).max(LATEST_INSTANT), z.string().max(128)]);

export type EventFilter = DateRange & { eventTypes?: string[]; creatorId?: string; sandbox: boolean };

/** A ClickHouse ledger row as read here: the item's fields, sandbox as 0/1, and the ids to name. */
type LedgerRow = Omit<LedgerItemRow, 'sandbox'> & { occurred_ms: number; sandbox: number; link_id: number | null; creator_id: string | null };

export async function ledgerFeed(
  { db, warehouse }: ListReader,
  brandId: string,
  filter: EventFilter,
  page: { limit: number; cursor?: z.output<typeof eventCursor> },
) {
  // Optional conditions are fixed SQL text; every value is a bound parameter.
  const conditions = [
    'brand_id = {brand:String}',
    'sandbox = {sandbox:UInt8}',
    'toDate(occurred_at) BETWEEN {start:Date32} AND {end:Date32}',
    // A row a verified row superseded is no longer listed (docs/webhooks.md).
    ledgerCounts('brand_id = {brand:String}'),
  ];
  const params: Record<string, unknown> = {
    brand: brandId,
    sandbox: filter.sandbox ? 1 : 0,
    start: filter.start_date,
    end: filter.end_date,
    take: page.limit + 1,
  };
  if (filter.eventTypes) {
    conditions.push('event_type IN {eventTypes:Array(String)}');
    params.eventTypes = filter.eventTypes;
  }
  if (filter.creatorId) {
    conditions.push('creator_id = {creatorId:String}');
    params.creatorId = filter.creatorId;
  }
  if (page.cursor) {
    conditions.push("(occurred_at, id) < (fromUnixTimestamp64Milli({atMs:Int64}, 'UTC'), {afterId:String})");
    [params.atMs, params.afterId] = page.cursor;
  }
  const rows = await warehouse.rows<LedgerRow>(
    `SELECT id, event_type, transaction_id, source, toFloat64(amount) AS amount, currency, occurred_at,
            toUnixTimestamp64Milli(occurred_at) AS occurred_ms, sandbox, external_user_id, link_id, creator_id,
            code_label, resolution_method, confidence
     FROM ledger FINAL
     WHERE ${conditions.join(' AND ')}
     ORDER BY occurred_at DESC, id DESC
     LIMIT {take:UInt32}`,
    params,
  );
  const { data, pagination } = toPage(rows, page.limit, (row) => [Number(row.occurred_ms), row.id]);
  const [links, creators] = await Promise.all([
    linkNames(db, brandId, data.map((r) => r.link_id)),
    creatorNames(db, data.map((r) => r.creator_id)),
  ]);
  const items = data.map((row) =>
    ledgerItem(
      { ...row, sandbox: Boolean(Number(row.sandbox)) },
      (row.link_id !== null && links.get(Number(row.link_id))) || null,
      (row.creator_id !== null && creators.get(row.creator_id)) || null,
    ),
  );
  return { data: items, pagination };
}

/** The brand's own links among `ids`, as {id, domain, slug}. */
async function linkNames(db: Db, brandId: string, ids: (number | null)[]) {
  const wanted = [...new Set(ids.filter((id) => id !== null).map(Number))];
  if (wanted.length === 0) return new Map<number, { id: number; domain: string; slug: string }>();
  const rows = await linksWithDomain(db)
    .where('l.brand_id', '=', brandId)
    .where('l.id', 'in', wanted)
    .execute();
  return new Map(rows.map((r) => [Number(r.id), { id: Number(r.id), domain: r.domain, slug: r.slug }]));
}

async function creatorNames(db: Db, ids: (string | null)[]) {
  const wanted = [...new Set(ids.filter((id) => id !== null))];
  if (wanted.length === 0) return new Map<string, { id: string; name: string }>();
  const rows = await db.selectFrom('creators').select(['id', 'name']).where('id', 'in', wanted).execute();
  return new Map(rows.map((r) => [r.id, r]));
}
