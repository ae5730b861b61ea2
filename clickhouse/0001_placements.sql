-- Placements and their metric snapshots, as the set-up endpoints deliver them.
-- Both are ReplacingMergeTree keyed on the fact's natural id: a replayed batch and a
-- later correction replace rows instead of adding them. Reads that must not see
-- duplicates before a merge use FINAL or argMax(…, version).

CREATE TABLE IF NOT EXISTS placements
(
    brand_id      LowCardinality(String),
    placement_id  String,
    campaign_id   String,
    creator_id    Nullable(String),
    platform      LowCardinality(String),
    url           Nullable(String),
    thumbnail_url Nullable(String),
    caption       Nullable(String),
    posted_at     DateTime64(3, 'UTC'),
    version       UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (brand_id, placement_id)
SETTINGS non_replicated_deduplication_window = 1000;

-- Cumulative lifetime totals as of the end of `date` (UTC). A later snapshot for the
-- same (placement, date) has a higher version and replaces the earlier one.
CREATE TABLE IF NOT EXISTS placement_snapshots
(
    placement_id String,
    date         Date,
    views        UInt64,
    likes        UInt64,
    comments     UInt64,
    shares       Nullable(UInt64),
    version      UInt64
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(date)
ORDER BY (placement_id, date)
SETTINGS non_replicated_deduplication_window = 1000;
