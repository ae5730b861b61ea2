import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { Warehouse } from '../warehouse/clickhouse';
import type { Scope, Sort } from './params';

/**
 * The Data API's ClickHouse questions, over the derived tables of clickhouse/0002_data_api.sql.
 * Every value is bound as a {name:Type} parameter; the only SQL chosen in code is fixed
 * text picked from the maps below. Every question is scoped to one brand.
 */

const scopeParams = (s: Scope) => ({
  brand: s.brandId,
  start: s.start,
  end: s.end,
  platforms: s.platforms,
  campaigns: s.campaignIds,
});

/** Rows (placement_totals or placement_activity) of the brand's placements on the chosen platforms and campaigns. */
const IN_SCOPE = `brand_id = {brand:String} AND platform IN {platforms:Array(String)} AND campaign_id IN {campaigns:Array(String)}`;
const POSTED_IN_RANGE = `toDate(posted_at) BETWEEN {start:Date} AND {end:Date}`;
/** The placement had a day with activity in the range. */
const ACTIVE_IN_RANGE = `arrayExists(run -> run.first <= {end:Date} AND run.last >= {start:Date}, active_runs)`;
/** All the placement's snapshots lie in the range, so its activity in the range is its lifetime totals. */
const HISTORY_IN_RANGE = `(first_snapshot >= {start:Date} AND last_snapshot <= {end:Date})`;

const PLACEMENT_COLUMNS = 'placement_id, platform, campaign_id, creator_id, url, thumbnail_url, caption, posted_at';

/**
 * upload_date counts rows of one table: its summary and pages read them without a subquery, which
 * costs embedded ClickHouse 2-4 ms of analysis a statement (docs/benchmarks.md, "Reads").
 */
const UPLOAD_DATE_ROWS = `placement_totals FINAL WHERE ${IN_SCOPE} AND ${POSTED_IN_RANGE}`;

/**
 * The placements an answer counts, with their figures: upload_date, those posted in the range with
 * lifetime totals; view_date, those active in it with that activity (lifetime totals when the whole
 * history lies in the range, else their days summed from placement_activity).
 */
const COUNTED_PLACEMENTS: Record<Scope['attribution'], string> = {
  upload_date: `SELECT ${PLACEMENT_COLUMNS}, views, likes, comments, shares FROM ${UPLOAD_DATE_ROWS}`,
  view_date: `
    SELECT ${PLACEMENT_COLUMNS}, views, likes, comments, if(shares_reported, ifNull(shares, 0), NULL) AS shares
    FROM placement_totals FINAL
    WHERE ${IN_SCOPE} AND ${HISTORY_IN_RANGE} AND notEmpty(active_runs)
    UNION ALL
    SELECT ${PLACEMENT_COLUMNS}, a.views, a.likes, a.comments, if(a.shares_known > 0, a.shares, NULL)
    FROM (
        SELECT * FROM placement_totals FINAL
        WHERE ${IN_SCOPE} AND NOT ${HISTORY_IN_RANGE} AND ${ACTIVE_IN_RANGE}
    ) AS t
    INNER JOIN (
        SELECT placement_id, sum(views) AS views, sum(likes) AS likes, sum(comments) AS comments,
               sum(shares) AS shares, sum(shares_known) AS shares_known
        FROM placement_activity
        WHERE ${IN_SCOPE} AND date BETWEEN {start:Date} AND {end:Date}
          AND placement_id IN (
              SELECT placement_id FROM placement_totals FINAL
              WHERE ${IN_SCOPE} AND NOT ${HISTORY_IN_RANGE} AND ${ACTIVE_IN_RANGE})
        GROUP BY placement_id
        HAVING sum(active) > 0
    ) AS a USING (placement_id)`,
};

/** Totals over counted placements: shares are null only when every counted placement's are. */
const TOTALS = `count() AS posts, sum(views) AS views, sum(likes) AS likes, sum(comments) AS comments,
  if(count() > 0 AND count(shares) = 0, NULL, sum(ifNull(shares, 0))) AS shares`;

/** The one definition of engagement: (likes + comments + shares) / views, 0 without views. */
const ENGAGEMENT_RATE = `if(views = 0, 0, (likes + comments + ifNull(shares, 0)) / views)`;

/** Creator names, handles and followers of the brand's creators (the mirror of Postgres). */
const BRAND_CREATORS = `
    SELECT creator_id, name, handles, followers
    FROM creators FINAL
    WHERE creator_id IN (SELECT creator_id FROM placement_totals WHERE brand_id = {brand:String})`;

export type Totals = { posts: number; views: number; likes: number; comments: number; shares: number | null };
export type Summary = Totals & { creators: number; engagement_rate: number };
export type DailyTotals = Totals & { date: string };

/** Its engagement rate is added up here (engagementRate), as the view_date summary's is. */
const SUMMARY_UPLOAD_DATE = `SELECT ${TOTALS}, uniqExactIf(creator_id, creator_id != '') AS creators FROM ${UPLOAD_DATE_ROWS}`;

/**
 * The view_date summary in two statements run side by side (embedded reads run on several
 * connections): the sums from the by_day projection, placements and creators from their active days.
 */
const SUMMARY_VIEW_DATE_SUMS = `
    SELECT sum(views) AS views, sum(likes) AS likes, sum(comments) AS comments,
           sum(shares) AS shares, sum(shares_known) AS shares_known
    FROM placement_activity
    WHERE ${IN_SCOPE} AND date BETWEEN {start:Date} AND {end:Date}`;
const SUMMARY_VIEW_DATE_COUNTS = `
    SELECT count() AS posts, uniqExactIf(creator_id, creator_id != '') AS creators
    FROM placement_totals FINAL
    WHERE ${IN_SCOPE} AND ${ACTIVE_IN_RANGE}`;

/** ENGAGEMENT_RATE for totals added up outside ClickHouse (the same Float64 arithmetic). */
const engagementRate = (t: Totals) => (t.views === 0 ? 0 : (t.likes + t.comments + (t.shares ?? 0)) / t.views);

/** Days with something counted; the caller fills in the others. */
const DAILY: Record<Scope['attribution'], string> = {
  upload_date: `
    SELECT toDate(posted_at) AS date, ${TOTALS}
    FROM placement_totals FINAL
    WHERE ${IN_SCOPE} AND ${POSTED_IN_RANGE}
    GROUP BY date ORDER BY date`,
  // Read from the by_day projection: a few rows per day, whatever the number of placements.
  view_date: `
    SELECT date, sum(active) AS posts, sum(views) AS views, sum(likes) AS likes,
           sum(comments) AS comments, if(posts > 0 AND sum(shares_known) = 0, NULL, sum(shares)) AS shares
    FROM placement_activity
    WHERE ${IN_SCOPE} AND date BETWEEN {start:Date} AND {end:Date}
    GROUP BY date ORDER BY date`,
};

/** Sort keys of /posts, each descending with the placement id ascending to break ties. */
const POST_SORT_KEYS: Record<Sort, { expression: string; type: 'Int64' | 'Float64' }> = {
  recent: { expression: 'toUnixTimestamp64Milli(posted_at)', type: 'Int64' },
  views: { expression: 'views', type: 'Int64' },
  engagement: { expression: 'engagement_rate', type: 'Float64' },
};

/** A /posts position: the sort key and id of the last placement already answered. */
export type PostCursor = { key: number; id: string };

export type PostRow = {
  placement_id: string;
  url: string | null;
  thumbnail_url: string | null;
  caption: string | null;
  platform: string;
  posted_at: string;
  campaign_id: string;
  creator_id: string;
  creator_name: string;
  creator_handle: string;
  views: number;
  likes: number;
  comments: number;
  shares: number | null;
  engagement_rate: number;
  sort_key: number;
};

/**
 * A page of placements without their creators' names: joining the brand's creators in the same
 * statement cost about twice the page's own CPU, even for two placements (docs/benchmarks.md, "Reads").
 */
function postsQuery(scope: Scope, sort: Sort, limit: number, after: PostCursor | undefined) {
  const key = POST_SORT_KEYS[sort];
  const keyset = after
    ? `(sort_key < {after_key:${key.type}} OR (sort_key = {after_key:${key.type}} AND placement_id > {after_id:String}))`
    : '';
  const figures = `${ENGAGEMENT_RATE} AS engagement_rate, ${key.expression} AS sort_key`;
  const page = `ORDER BY sort_key DESC, placement_id ASC LIMIT {limit:UInt32}`;
  const query =
    scope.attribution === 'upload_date'
      ? `SELECT ${PLACEMENT_COLUMNS}, views, likes, comments, shares, ${figures} FROM ${UPLOAD_DATE_ROWS} ${keyset && `AND ${keyset}`} ${page}`
      : `SELECT *, ${figures} FROM (${COUNTED_PLACEMENTS.view_date}) ${keyset && `WHERE ${keyset}`} ${page}`;
  // An integer key goes as a bigint: the client refuses numbers beyond 2^53 - 1, and a cursor may hold 2^53.
  const afterKey = after && key.type === 'Int64' ? BigInt(after.key) : after?.key;
  return { query, params: { ...scopeParams(scope), limit, after_key: afterKey, after_id: after?.id } };
}

export type CreatorRow = {
  creator_id: string;
  name: string;
  handles: { platform: string; handle: string }[];
  followers: number | null;
  platforms: string[];
  posts: number;
  views: number;
  likes: number;
  comments: number;
  shares: number | null;
  engagement_rate: number;
  avg_views: number;
};

/** posts.csv reads placements in pages of these sizes: a small first one, so the first bytes leave at once. */
const FIRST_CSV_PAGE = 100;
const CSV_PAGE = 10_000;

/** Placements without a creator are answered as one creator row with this name and a null id. */
const UNKNOWN_CREATOR_NAME = 'Unknown creator';

function creatorsQuery(scope: Scope, limit: number, offset: number) {
  const query = `
    SELECT g.creator_id AS creator_id, if(g.creator_id = '', {unknown:String}, c.name) AS name, c.handles AS handles,
           c.followers AS followers, g.platforms AS platforms, g.posts AS posts, g.views AS views, g.likes AS likes,
           g.comments AS comments, g.shares AS shares, ${ENGAGEMENT_RATE} AS engagement_rate,
           g.views / g.posts AS avg_views, count() OVER () AS total
    FROM (
        SELECT creator_id, ${TOTALS}, groupUniqArray(platform) AS platforms
        FROM (${COUNTED_PLACEMENTS[scope.attribution]})
        GROUP BY creator_id
    ) AS g
    LEFT JOIN (${BRAND_CREATORS}) AS c ON c.creator_id = g.creator_id
    ORDER BY views DESC, name ASC, creator_id ASC
    LIMIT {limit:UInt32} OFFSET {offset:UInt64}
    SETTINGS join_use_nulls = 0`;
  return { query, params: { ...scopeParams(scope), unknown: UNKNOWN_CREATOR_NAME, limit, offset } };
}

/**
 * The creators a page may hold, by views: the first `limit` and every creator tied with the last on
 * views (the name decides among them), with the number of creators in scope. Without the brand's
 * creators joined: the join cost about two thirds of the page's statement (docs/benchmarks.md, "Reads").
 */
function creatorTotalsQuery(scope: Scope, limit: number) {
  const from = scope.attribution === 'upload_date' ? UPLOAD_DATE_ROWS : `(${COUNTED_PLACEMENTS.view_date})`;
  const query = `
    SELECT creator_id, ${TOTALS}, groupUniqArray(platform) AS platforms, count() OVER () AS total
    FROM ${from}
    GROUP BY creator_id
    ORDER BY views DESC
    LIMIT {limit:UInt32} WITH TIES`;
  return { query, params: { ...scopeParams(scope), limit } };
}

/** Past this many creators tied on views at a page's end, the page is read in one statement with their names joined. */
const MAX_TIED_CREATORS = 1000;

/** ClickHouse's order of strings: their UTF-8 bytes. */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

type NamedCreator = { creator_id: string; name: string; handles: { platform: string; handle: string }[]; followers: number | null };

/** Reads the Data API's answers from ClickHouse, and the names of the creators they hold from Postgres. */
export class DataQueries {
  constructor(
    private readonly wh: Warehouse,
    private readonly db: Db,
  ) {}

  /**
   * Names, handles and followers of creators named by the brand's rows, from their Postgres record
   * (written before its ClickHouse mirror): an indexed read costs a fraction of an embedded statement.
   */
  private async creatorsById(ids: string[]): Promise<Map<string, NamedCreator>> {
    if (ids.length === 0) return new Map();
    const { rows } = await sql<NamedCreator>`
      SELECT id AS creator_id, name, handles, followers FROM creators WHERE id = ANY(${ids}::text[])`.execute(this.db);
    // jsonb orders an object's keys its own way: answer each handle as the mirror does, platform first.
    return new Map(rows.map((c) => [c.creator_id, { ...c, handles: c.handles.map((h) => ({ platform: h.platform, handle: h.handle })) }]));
  }

  /** First posting day of the brand's placements in visible campaigns, or null. */
  async metricsSince(brandId: string, visibleCampaignIds: string[]): Promise<string | null> {
    const [row] = await this.wh.rows<{ since: string | null }>(
      `SELECT toString(minOrNull(toDate(posted_at))) AS since
       FROM placement_totals FINAL
       WHERE brand_id = {brand:String} AND campaign_id IN {campaigns:Array(String)}`,
      { brand: brandId, campaigns: visibleCampaignIds },
    );
    return row?.since ?? null;
  }

  async summary(scope: Scope): Promise<Summary> {
    const params = scopeParams(scope);
    if (scope.attribution === 'upload_date') {
      const [totals] = await this.wh.rows<Totals & { creators: number }>(SUMMARY_UPLOAD_DATE, params);
      return { ...totals!, engagement_rate: engagementRate(totals!) };
    }
    type Sums = Omit<Totals, 'posts' | 'shares'> & { shares: number; shares_known: number };
    const [[sums], [counts]] = await Promise.all([
      this.wh.rows<Sums>(SUMMARY_VIEW_DATE_SUMS, params),
      this.wh.rows<{ posts: number; creators: number }>(SUMMARY_VIEW_DATE_COUNTS, params),
    ]);
    const { views, likes, comments, shares, shares_known } = sums!;
    const { posts, creators } = counts!;
    // Shares are null only when every counted placement's are (no active day reported them).
    const totals: Totals = { posts, views, likes, comments, shares: posts > 0 && shares_known === 0 ? null : shares };
    return { ...totals, creators, engagement_rate: engagementRate(totals) };
  }

  /** Totals of the days in range that have any; days without are absent. */
  daily(scope: Scope): Promise<DailyTotals[]> {
    return this.wh.rows<DailyTotals>(DAILY[scope.attribution], scopeParams(scope));
  }

  /** Up to `limit` placements after the cursor, in the order of `sort`, with their creators' names and handles. */
  async posts(scope: Scope, sort: Sort, limit: number, after?: PostCursor): Promise<PostRow[]> {
    const { query, params } = postsQuery(scope, sort, limit, after);
    type Page = Omit<PostRow, 'creator_name' | 'creator_handle'>;
    const rows = await this.wh.rows<Page>(query, params);
    const creators = await this.creatorsById([...new Set(rows.map((r) => r.creator_id).filter((id) => id !== ''))]);
    // A creator without a record reads as no name and no handle; the handle is the one on the placement's platform.
    return rows.map((row) => {
      const creator = creators.get(row.creator_id);
      const handle = creator?.handles.find((h) => h.platform === row.platform)?.handle ?? '';
      return { ...row, creator_name: creator?.name ?? '', creator_handle: handle };
    });
  }

  /**
   * Up to `max` placements for CSV, read in keyset pages of the /posts query: a small
   * first page, so the first bytes leave at once, then larger ones. Only one page is ever
   * held (embedded ClickHouse hands over a result only once complete).
   */
  async postsStream(scope: Scope, sort: Sort, max: number): Promise<AsyncIterable<PostRow>> {
    const read = (limit: number, after?: PostCursor) => this.posts(scope, sort, limit, after);
    let limit = Math.min(FIRST_CSV_PAGE, max);
    const first = await read(limit); // awaited here: a failing query fails the request, not the body
    return (async function* () {
      let page = first;
      let sent = 0;
      for (;;) {
        let last: PostRow | undefined;
        let count = 0;
        for await (const row of page) {
          yield row;
          last = row;
          count++;
        }
        sent += count;
        if (last === undefined || count < limit || sent >= max) return;
        limit = Math.min(CSV_PAGE, max - sent);
        page = await read(limit, { key: last.sort_key, id: last.placement_id });
      }
    })();
  }

  /**
   * One page of creators (by views, then name, then id) and the number of creators in scope: the
   * ranked totals, then the names of those that may be on the page, ordered here as ClickHouse would.
   */
  async creators(scope: Scope, page: number, limit: number): Promise<{ rows: CreatorRow[]; total: number }> {
    const offset = (page - 1) * limit;
    type Ranked = Omit<CreatorRow, 'name' | 'handles' | 'followers' | 'engagement_rate' | 'avg_views'> & { total: number };
    const { query, params } = creatorTotalsQuery(scope, offset + limit);
    const ranked = await this.wh.rows<Ranked>(query, params);
    if (ranked.length > offset + limit + MAX_TIED_CREATORS) return this.creatorsJoined(scope, page, limit);
    const total = ranked[0]?.total ?? 0;
    // Names decide only among equal views: only the creators whose views some creator on the page has need them.
    const pageViews = new Set(ranked.slice(offset, offset + limit).map((r) => r.views));
    const candidates = ranked.filter((r) => pageViews.has(r.views));
    const ids = candidates.map((r) => r.creator_id).filter((id) => id !== '');
    const named = await this.creatorsById(ids);
    // A creator without a record reads as no name, no handle and no followers, as the join answers.
    const rows: CreatorRow[] = candidates.map(({ total: _, ...r }) => {
      const c = named.get(r.creator_id);
      const name = r.creator_id === '' ? UNKNOWN_CREATOR_NAME : (c?.name ?? '');
      return { ...r, name, handles: c?.handles ?? [], followers: c?.followers ?? null, engagement_rate: engagementRate(r), avg_views: r.views / r.posts };
    });
    rows.sort((a, b) => b.views - a.views || byBytes(a.name, b.name) || byBytes(a.creator_id, b.creator_id));
    // The candidates start where the first of them stands among all the ranked creators.
    const first = ranked.findIndex((r) => pageViews.has(r.views));
    return { rows: rows.slice(offset - first, offset - first + limit), total };
  }

  /** A page of creators in one statement, their names joined (a page whose creators tie by the thousand). */
  async creatorsJoined(scope: Scope, page: number, limit: number): Promise<{ rows: CreatorRow[]; total: number }> {
    const { query, params } = creatorsQuery(scope, limit, (page - 1) * limit);
    const rows = await this.wh.rows<CreatorRow & { total: number }>(query, params);
    // Each row carries the count; a page past the end has no row to carry it.
    const total = rows[0]?.total ?? (page === 1 ? 0 : await this.creatorCount(scope));
    return { rows: rows.map(({ total: _, ...row }) => row), total };
  }

  /** The first `limit` creators, read as ClickHouse sends them (CSV). */
  creatorsStream(scope: Scope, limit: number): Promise<AsyncIterable<CreatorRow>> {
    const { query, params } = creatorsQuery(scope, limit, 0);
    return this.wh.stream<CreatorRow>(query, params);
  }

  private async creatorCount(scope: Scope): Promise<number> {
    const [row] = await this.wh.rows<{ n: number }>(
      `SELECT uniqExact(creator_id) AS n FROM (${COUNTED_PLACEMENTS[scope.attribution]})`,
      scopeParams(scope),
    );
    return row!.n;
  }
}
