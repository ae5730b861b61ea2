import type { Warehouse } from '../warehouse/clickhouse';
import { nextVersion } from '../warehouse/values';

/**
 * Recomputes every placement a batch names from its whole snapshot history: correction rows into
 * placement_activity, a new version of placement_totals. Idempotent; derives of one process run one
 * at a time, as corrections read what is stored (docs/reads.md, "Data API: derived tables").
 */

/** Placements per statement: bounds the memory of one derive query (about 365 rows each for a year). */
const PLACEMENTS_PER_STATEMENT = 2000;

let tail: Promise<unknown> = Promise.resolve();

/** Recomputes the derived rows of these placements (the afterInsert of the placement writers); resolves when they are written. */
export function derivePlacements(wh: Warehouse, placementIds: Iterable<string>): Promise<void> {
  const ids = [...new Set(placementIds)];
  const run = tail.then(async () => {
    for (let i = 0; i < ids.length; i += PLACEMENTS_PER_STATEMENT) {
      const chunk = ids.slice(i, i + PLACEMENTS_PER_STATEMENT);
      await wh.command(CORRECT_ACTIVITY, { ids: chunk });
      await wh.command(REPLACE_TOTALS, { ids: chunk, version: nextVersion() });
    }
  });
  tail = run.catch(() => {});
  return run;
}

/**
 * Each placement's snapshots as daily activity, each minus the previous one (cumulative, so they
 * add up to the latest); null shares count 0 and `reported` keeps whether there were any.
 */
const HISTORY = `
WITH
placement AS (
    SELECT brand_id, placement_id, platform, campaign_id, ifNull(creator_id, '') AS creator_id,
           url, thumbnail_url, caption, posted_at
    FROM placements FINAL
    WHERE placement_id IN {ids:Array(String)}
),
day AS (
    SELECT placement_id, date,
           toInt64(views) AS views_total, toInt64(likes) AS likes_total,
           toInt64(comments) AS comments_total, toNullable(toInt64(shares)) AS shares_total,
           views_total - lagInFrame(views_total, 1, toInt64(0)) OVER w AS views_delta,
           likes_total - lagInFrame(likes_total, 1, toInt64(0)) OVER w AS likes_delta,
           comments_total - lagInFrame(comments_total, 1, toInt64(0)) OVER w AS comments_delta,
           ifNull(shares_total, 0) - lagInFrame(ifNull(shares_total, 0), 1, toInt64(0)) OVER w AS shares_delta,
           views_delta != 0 OR likes_delta != 0 OR comments_delta != 0 OR shares_delta != 0 AS active,
           active AND shares_total IS NOT NULL AS shares_known
    FROM placement_snapshots FINAL
    WHERE placement_id IN {ids:Array(String)}
    WINDOW w AS (PARTITION BY placement_id ORDER BY date ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)
)`;

const CORRECT_ACTIVITY = `
INSERT INTO placement_activity
${HISTORY}
SELECT brand_id, placement_id, date, platform, campaign_id, creator_id,
       sum(views) AS views_, sum(likes) AS likes_, sum(comments) AS comments_,
       sum(shares) AS shares_, sum(shares_known) AS shares_known_, sum(active) AS active_
FROM (
    SELECT p.brand_id AS brand_id, d.placement_id AS placement_id, d.date AS date, p.platform AS platform,
           p.campaign_id AS campaign_id, p.creator_id AS creator_id, d.views_delta AS views,
           d.likes_delta AS likes, d.comments_delta AS comments, d.shares_delta AS shares,
           toInt64(d.shares_known) AS shares_known, toInt64(d.active) AS active
    FROM day AS d INNER JOIN placement AS p ON p.placement_id = d.placement_id
    UNION ALL
    SELECT brand_id, placement_id, date, platform, campaign_id, creator_id,
           -views, -likes, -comments, -shares, -shares_known, -active
    FROM placement_activity
    WHERE brand_id IN (SELECT brand_id FROM placement) AND placement_id IN {ids:Array(String)}
)
GROUP BY brand_id, placement_id, date, platform, campaign_id, creator_id
HAVING views_ != 0 OR likes_ != 0 OR comments_ != 0 OR shares_ != 0 OR shares_known_ != 0 OR active_ != 0
SETTINGS join_use_nulls = 0`;

const REPLACE_TOTALS = `
INSERT INTO placement_totals
${HISTORY},
history AS (
    SELECT placement_id,
           argMax((views_total, likes_total, comments_total, shares_total), date) AS latest,
           min(date) AS first_snapshot, max(date) AS last_snapshot,
           arraySort(groupArrayIf(date, active)) AS active_dates,
           max(shares_known) AS shares_reported
    FROM day
    GROUP BY placement_id
)
SELECT p.brand_id, p.placement_id, p.campaign_id, p.creator_id, p.platform, p.url, p.thumbnail_url,
       p.caption, p.posted_at,
       h.latest.1, h.latest.2, h.latest.3, h.latest.4,
       if(h.placement_id = '', NULL, h.first_snapshot), if(h.placement_id = '', NULL, h.last_snapshot),
       -- split the sorted active days wherever a day is skipped; keep each run's ends
       arrayMap(run -> (run[1], run[-1]),
                arrayFilter(run -> notEmpty(run),
                            arraySplit((d, step) -> step > 1, h.active_dates,
                                       arrayDifference(arrayMap(d -> toInt32(d), h.active_dates))))),
       h.shares_reported,
       {version:UInt64}
FROM placement AS p LEFT JOIN history AS h ON h.placement_id = p.placement_id
SETTINGS join_use_nulls = 0`;

/** The brands these placements belong to (an id stays with its brand). */
export async function brandsOfPlacements(wh: Warehouse, placementIds: string[]): Promise<string[]> {
  const rows = await wh.rows<{ brand_id: string }>(
    'SELECT DISTINCT brand_id FROM placements WHERE placement_id IN {ids:Array(String)}',
    { ids: [...new Set(placementIds)] },
  );
  return rows.map((r) => r.brand_id);
}
