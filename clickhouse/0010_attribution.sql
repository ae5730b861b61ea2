-- Attribution facts. Each row has a unique id (clicks: the click token; installs and
-- ledger: the id of the Postgres row that accepted them), which the batch workers use
-- to never insert a row twice (FactWriter.idColumn). ReplacingMergeTree on the same
-- key is the last guard: a duplicate that slipped in would be merged away.
-- Sandbox ledger rows are stored and excluded from every total (sandbox = 0 filters).

CREATE TABLE IF NOT EXISTS clicks
(
    brand_id     LowCardinality(String),
    link_id      UInt64,
    creator_id   String,
    click_token  String,
    clicked_at   DateTime64(3, 'UTC'),
    domain       String,
    slug         String,
    link_type    LowCardinality(String),
    platform     LowCardinality(String),
    country      LowCardinality(String),
    referrer     String,
    utm_source   String,
    utm_medium   String,
    utm_campaign String,
    utm_term     String,
    utm_content  String,
    ip_hash      String,
    INDEX click_token_bf click_token TYPE bloom_filter GRANULARITY 4
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(clicked_at)
ORDER BY (brand_id, link_id, clicked_at, click_token)
SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS installs
(
    brand_id          LowCardinality(String),
    id                String,
    install_id        String,
    platform          LowCardinality(String),
    attributed        UInt8,
    resolution_method LowCardinality(String),
    confidence        Nullable(Float32),
    link_id           Nullable(UInt64),
    code_id           Nullable(String),
    code_label        Nullable(String),
    creator_id        Nullable(String),
    app_version       Nullable(String),
    occurred_at       DateTime64(3, 'UTC'),
    recorded_at       DateTime64(3, 'UTC'),
    INDEX id_bf id TYPE bloom_filter GRANULARITY 4
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (brand_id, occurred_at, id)
SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS ledger
(
    brand_id          LowCardinality(String),
    id                String,
    event_type        LowCardinality(String),
    transaction_id    String,
    external_user_id  Nullable(String),
    amount            Decimal(18, 4),
    currency          LowCardinality(String),
    source            LowCardinality(String),
    click_token       Nullable(String),
    link_id           Nullable(UInt64),
    creator_id        Nullable(String),
    code_id           Nullable(String),
    code_label        Nullable(String),
    resolution_method LowCardinality(String),
    confidence        Nullable(Float32),
    sandbox           UInt8,
    occurred_at       DateTime64(3, 'UTC'),
    recorded_at       DateTime64(3, 'UTC'),
    INDEX id_bf id TYPE bloom_filter GRANULARITY 4
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (brand_id, occurred_at, id)
SETTINGS non_replicated_deduplication_window = 1000;
