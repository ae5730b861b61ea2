import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../src/app';
import { encodeCursor } from '../src/data-api/cursor';
import { PLATFORMS } from '../src/platforms';
import { closeServices, createServices, migrate, type Services } from '../src/services';
import { round, timeCalls } from './helpers';
import { benchEnvironment, benchLogger } from './environment';
import { type BenchBrand, seedPlacements, setUpBrand } from './placements-seed';
import type { Bench } from './run';

/**
 * The Data API over 100,000 placements with a year of daily snapshots each, generated straight
 * into ClickHouse (HTTP would take an hour) and derived by the workers' step, against Postgres over
 * the same rows. Method and results: docs/benchmarks.md.
 */

const PLACEMENTS = 100_000;
const DAYS = 365;
const CREATORS = 5_000;
const VISIBLE_CAMPAIGNS = 20;
const DAY_MS = 86_400_000;
/** The deep /posts page starts after this many placements. */
const DEEP_POSITION = 90_000;

const bench: Bench = async (emit) => {
  const env = benchEnvironment('data');
  const log = benchLogger(env.config.logLevel);
  // The Postgres baseline loads and queries for minutes a statement: past the request path's statement timeout.
  // The answer cache is off: this bench measures the reads themselves (the reads bench measures the cache).
  const timeouts = { ...env.config.timeouts, pgStatementMs: 600_000 };
  const services = await createServices({ ...env.config, timeouts, readCacheBytes: 0 }, log);
  let app: FastifyInstance | undefined;
  try {
    await migrate(services);
    app = await buildApp(services);
    const base = `${await app.listen({ host: '127.0.0.1', port: 0 })}/api/v1`;
    const brand = await setUpBrand(app, env.config, VISIBLE_CAMPAIGNS);
    const firstDay = new Date(Date.now() - 395 * DAY_MS).toISOString().slice(0, 10);

    const seed = await seedPlacements(services, brand, firstDay, { placements: PLACEMENTS, days: DAYS, creators: CREATORS });
    emit({ name: 'data-api-seed', ...seed });
    const pg = await loadBaseline(services, brand, firstDay);
    emit({ name: 'data-api-baseline-load', ...pg });

    const get = (path: string) => fetchJson(`${base}${path}`, brand.key);
    const scope = { brand: brand.id, start: firstDay, end: new Date().toISOString().slice(0, 10), campaigns: brand.visibleCampaigns };
    for (const attribution of ['upload_date', 'view_date'] as const) {
      for (const question of ['summary', 'daily'] as const) {
        const ours = await timeCalls(() => get(`/metrics/${question}?attribution=${attribution}`), { warmup: 3, runs: 30 });
        // Tens of seconds per Postgres answer: one run each keeps the bench within minutes.
        const baseline = await timeCalls(() => baselineQuery(question, attribution, scope).execute(services.db), {
          warmup: 0,
          runs: 1,
        });
        emit({
          name: `data-api-${question}-${attribution}`,
          ...ours,
          baseline: { runs: 1, p50_ms: baseline.p50_ms },
          ratio: round(baseline.p50_ms / ours.p50_ms, 1),
        });
      }
    }

    const firstPage = await timeCalls(() => get('/posts?limit=50'));
    emit({ name: 'data-api-posts-first-page', ...firstPage });
    const deep = await deepCursor(services, brand.id, DEEP_POSITION);
    const deepPage = await timeCalls(() => get(`/posts?limit=50&cursor=${deep}`));
    emit({ name: 'data-api-posts-deep-page', position: DEEP_POSITION, ...deepPage, baseline: firstPage, ratio: round(deepPage.p50_ms / firstPage.p50_ms) });

    const creatorsFirst = await timeCalls(() => get('/creators?limit=50'));
    const { pagination } = (await get('/creators?limit=50')) as { pagination: { total_pages: number } };
    emit({ name: 'data-api-creators-page-1', ...creatorsFirst });
    const creatorsLate = await timeCalls(() => get(`/creators?limit=50&page=${pagination.total_pages}`));
    emit({ name: 'data-api-creators-late-page', page: pagination.total_pages, ...creatorsLate, baseline: creatorsFirst, ratio: round(creatorsLate.p50_ms / creatorsFirst.p50_ms) });

    emit({ name: 'data-api-posts-csv', ...(await csvDownload(`${base}/posts.csv`, brand.key)) });
  } finally {
    await app?.close();
    await closeServices(services);
    await env.remove();
  }
};
export default bench;

/** The same daily activity rows (placement, day) in a plain Postgres table with indexes. */
async function loadBaseline(services: Services, brand: BenchBrand, firstDay: string) {
  const { db, warehouse } = services;
  const t0 = performance.now();
  await sql`CREATE UNLOGGED TABLE baseline_activity (
      brand_id text, placement_id text, platform text, campaign_id text, creator_id text,
      posted_date date, date date, views bigint, likes bigint, comments bigint, shares bigint,
      shares_known int, active int)`.execute(db);
  const platforms = sql.val([...PLATFORMS]);
  const visible = sql.val(brand.visibleCampaigns);
  const creators = sql.val(brand.creators);
  // Same formulas as seedWarehouse; one statement per slice of placements keeps memory flat.
  const slice = PLACEMENTS / 10;
  for (let from = 0; from < PLACEMENTS; from += slice) {
    await sql`
      INSERT INTO baseline_activity
      SELECT ${brand.id}, 'p' || lpad(i::text, 6, '0'), (${platforms}::text[])[i % 4 + 1],
             CASE WHEN i % 97 = 0 THEN ${brand.hiddenCampaigns[0]!} ELSE (${visible}::text[])[i % ${VISIBLE_CAMPAIGNS} + 1] END,
             CASE WHEN i % 50 = 0 THEN NULL ELSE (${creators}::text[])[(i * 7) % ${CREATORS} + 1] END,
             ${firstDay}::date + (i * 25 / 86400)::int, ${firstDay}::date + (i * 25 / 86400)::int + d,
             v, l, c, CASE WHEN i % 4 = 0 THEN 0 ELSE s END, CASE WHEN i % 4 = 0 THEN 0 ELSE 1 END, 1
      FROM (
        SELECT i, d,
               b * (d + 1) / (d + 8) - CASE WHEN d = 0 THEN 0 ELSE b * d / (d + 7) END AS v,
               b * (d + 1) / (10 * (d + 8)) - CASE WHEN d = 0 THEN 0 ELSE b * d / (10 * (d + 7)) END AS l,
               b * (d + 1) / (100 * (d + 8)) - CASE WHEN d = 0 THEN 0 ELSE b * d / (100 * (d + 7)) END AS c,
               b * (d + 1) / (300 * (d + 8)) - CASE WHEN d = 0 THEN 0 ELSE b * d / (300 * (d + 7)) END AS s
        FROM generate_series(${from}::bigint, ${from + slice - 1}::bigint) AS i,
             LATERAL (SELECT 1000 + (i * 7919) % 50000 AS b) AS base,
             generate_series(0, ${DAYS - 1}) AS d
      ) AS activity
      WHERE v <> 0 OR l <> 0 OR c <> 0 OR (i % 4 <> 0 AND s <> 0)`.execute(db);
  }
  await sql`CREATE INDEX ON baseline_activity (brand_id, date)`.execute(db);
  await sql`CREATE INDEX ON baseline_activity (brand_id, posted_date)`.execute(db);
  await sql`ANALYZE baseline_activity`.execute(db);
  const [pgRows] = (await sql<{ n: string; views: string }>`SELECT count(*) AS n, sum(views) AS views FROM baseline_activity`.execute(db))
    .rows;
  const [chRows] = await warehouse.rows<{ n: number; views: number }>('SELECT count() AS n, sum(views) AS views FROM placement_activity');
  if (Number(pgRows!.n) !== chRows!.n || Number(pgRows!.views) !== chRows!.views) {
    throw new Error(`baseline differs from ClickHouse: ${JSON.stringify({ pgRows, chRows })}`);
  }
  return { rows: chRows!.n, load_ms: round(performance.now() - t0, 0) };
}

type BaselineScope = { brand: string; start: string; end: string; campaigns: string[] };

/** The Data API's summary and daily questions in plain SQL over baseline_activity. */
function baselineQuery(question: 'summary' | 'daily', attribution: 'upload_date' | 'view_date', s: BaselineScope) {
  const day = attribution === 'upload_date' ? sql.ref('posted_date') : sql.ref('date');
  const placements = attribution === 'upload_date' ? sql`count(DISTINCT placement_id)` : sql`count(DISTINCT placement_id) FILTER (WHERE active = 1)`;
  const totals = sql`${placements} AS posts, sum(views) AS views, sum(likes) AS likes, sum(comments) AS comments,
    CASE WHEN sum(shares_known) = 0 THEN NULL ELSE sum(shares) END AS shares`;
  const where = sql`brand_id = ${s.brand} AND ${day} BETWEEN ${s.start}::date AND ${s.end}::date
    AND platform = ANY(${sql.val([...PLATFORMS])}::text[]) AND campaign_id = ANY(${sql.val(s.campaigns)}::text[])`;
  return question === 'summary'
    ? sql`SELECT ${totals}, count(DISTINCT creator_id) AS creators FROM baseline_activity WHERE ${where}`
    : sql`SELECT ${day} AS date, ${totals} FROM baseline_activity WHERE ${where} GROUP BY 1 ORDER BY 1`;
}

/** The cursor the API would answer after `position` placements in the default (recent) order. */
async function deepCursor(services: Services, brandId: string, position: number): Promise<string> {
  const [row] = await services.warehouse.rows<{ key: number; id: string }>(
    `SELECT toUnixTimestamp64Milli(posted_at) AS key, placement_id AS id FROM placement_totals FINAL
     WHERE brand_id = {brand:String} ORDER BY posted_at DESC, placement_id ASC LIMIT 1 OFFSET {offset:UInt64}`,
    { brand: brandId, offset: position - 1 },
  );
  return encodeCursor('recent', row!);
}

async function fetchJson(url: string, key: string): Promise<unknown> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** posts.csv: time to the first byte and to the last, lines, and the peak RSS growth of this process. */
async function csvDownload(url: string, key: string) {
  await (await fetch(url, { headers: { authorization: `Bearer ${key}` } })).text(); // warm-up
  const runs: { rows: number; ttfb_ms: number; total_ms: number; rss_growth_mb: number }[] = [];
  for (let run = 0; run < 3; run++) {
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 5);
    const t0 = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    const reader = res.body!.getReader();
    let ttfb = 0;
    let lines = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!ttfb) ttfb = performance.now() - t0;
      for (let i = value.indexOf(10); i !== -1; i = value.indexOf(10, i + 1)) lines++;
    }
    const total = performance.now() - t0;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    runs.push({ rows: lines - 1, ttfb_ms: round(ttfb), total_ms: round(total), rss_growth_mb: round((peak - before) / 1e6, 1) });
  }
  const median = (k: 'ttfb_ms' | 'total_ms') => runs.map((r) => r[k]).sort((a, b) => a - b)[1]!;
  return { rows: runs[0]!.rows, ttfb_ms: median('ttfb_ms'), total_ms: median('total_ms'), rss_growth_mb: Math.max(...runs.map((r) => r.rss_growth_mb)) };
}

