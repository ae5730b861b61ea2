-- Derived tables of the Data API (src/data-api), maintained by src/placements/derive.ts (run by
-- workers/writers.ts) after every placements / placement_metrics batch. Each answers one shape of question
-- without scanning the raw snapshots:
--   placement_totals    one row per placement: attributes, lifetime totals, active days
--                       (upload_date answers, /posts, /creators, view_date "posts"/"creators")
--   placement_activity  one row per placement and day with activity, plus the by_day
--                       projection (brand, day, platform, campaign) for view_date totals
--   creators            a mirror of the Postgres creators (names for sorting /creators)

-- Daily activity of a placement: the difference between its snapshot of the day and its
-- previous snapshot (the first snapshot counts whole). The derive step writes corrections,
-- "desired minus stored", so the stored rows always sum to the activity derived from the
-- placement's whole snapshot history; plain sum() reads are exact before and after merges,
-- and merges fold corrections away. Null shares count 0 in `shares`; `shares_known` says
-- whether the placement was active that day with a snapshot that reported shares.
CREATE TABLE IF NOT EXISTS placement_activity
(
    brand_id     LowCardinality(String),
    placement_id String,
    date         Date,
    platform     LowCardinality(String),
    campaign_id  String,
    creator_id   String,
    views        Int64,
    likes        Int64,
    comments     Int64,
    shares       Int64,
    shares_known Int64,
    active       Int64,
    -- Lives inside every part, so it is written atomically with the rows it sums.
    PROJECTION by_day
    (
        SELECT brand_id, date, platform, campaign_id,
               sum(views), sum(likes), sum(comments), sum(shares), sum(shares_known), sum(active)
        GROUP BY brand_id, date, platform, campaign_id
    )
)
ENGINE = SummingMergeTree((views, likes, comments, shares, shares_known, active))
PARTITION BY toYYYYMM(date)
ORDER BY (brand_id, placement_id, date, platform, campaign_id, creator_id)
SETTINGS deduplicate_merge_projection_mode = 'rebuild';

-- One row per placement, replaced as a whole by every derive (highest version wins; read
-- with FINAL). views/likes/comments/shares are the latest snapshot (lifetime totals);
-- first/last_snapshot and active_runs (maximal runs of consecutive active days) answer
-- "did this placement have activity in the range" without touching placement_activity.
CREATE TABLE IF NOT EXISTS placement_totals
(
    brand_id        LowCardinality(String),
    placement_id    String,
    campaign_id     String,
    creator_id      String,
    platform        LowCardinality(String),
    url             Nullable(String),
    thumbnail_url   Nullable(String),
    caption         Nullable(String),
    posted_at       DateTime64(3, 'UTC'),
    views           Int64,
    likes           Int64,
    comments        Int64,
    shares          Nullable(Int64),
    first_snapshot  Nullable(Date),
    last_snapshot   Nullable(Date),
    active_runs     Array(Tuple(first Date, last Date)),
    shares_reported UInt8,
    version         UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (brand_id, placement_id);

-- Creators live in Postgres (shared by brands); this copy, written when a creator is
-- created, lets ClickHouse sort /creators by views and then name, and page it.
CREATE TABLE IF NOT EXISTS creators
(
    creator_id String,
    name       String,
    handles    Array(Tuple(platform String, handle String)),
    followers  Nullable(Int64),
    version    UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY creator_id;

-- Snapshot batches name placements by id only: find their brand without a full scan.
ALTER TABLE placements ADD INDEX IF NOT EXISTS placement_id_idx placement_id TYPE bloom_filter GRANULARITY 1;
