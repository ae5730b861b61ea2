-- Clicks per brand, link and UTC day: what the portal's /overview and /links (and the
-- internal link lists) count, instead of scanning raw clicks. A year of 10 million clicks
-- on 1,000 links is 365,000 rollup rows (measured in bench/portal.bench.ts).
--
-- Exact because every click is written once: the batch workers insert only click tokens
-- the table does not hold yet. A replayed batch that ClickHouse drops by its deduplication
-- token is dropped here too, because this table keeps a deduplication window of its own
-- (the view's block inherits the insert's token). SummingMergeTree adds rows of one key up
-- when parts merge, so readers always sum(clicks).

CREATE TABLE IF NOT EXISTS clicks_daily
(
    brand_id LowCardinality(String),
    day      Date,
    link_id  UInt64,
    clicks   UInt64
)
ENGINE = SummingMergeTree
ORDER BY (brand_id, link_id, day)
SETTINGS non_replicated_deduplication_window = 1000;

-- Backfill of the clicks stored before this migration, before the view exists. Migrations
-- run at start before the workers take jobs; the guard makes a re-run after an
-- interruption add nothing (a rollup with rows has been backfilled, or fed by the view).
-- Its own deduplication token: embedded ClickHouse would otherwise reuse the session's last one.
INSERT INTO clicks_daily
SELECT brand_id, toDate(clicked_at) AS day, link_id, count() AS clicks
FROM clicks
WHERE (SELECT count() FROM clicks_daily) = 0
GROUP BY brand_id, day, link_id
SETTINGS insert_deduplication_token = '0020_portal_rollups_backfill';

CREATE MATERIALIZED VIEW IF NOT EXISTS clicks_daily_mv TO clicks_daily AS
SELECT brand_id, toDate(clicked_at) AS day, link_id, count() AS clicks
FROM clicks
GROUP BY brand_id, day, link_id;
