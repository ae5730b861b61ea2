import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../src/app';
import type { Config, } from '../src/config';
import { creatorFact } from '../src/data-api/warehouse/facts';
import { derivePlacements } from '../src/data-api/warehouse/placement-derive';
import { encodeCursor } from '../src/data-api/cursor';
import { signAdminToken } from '../src/http/admin-auth';
import { PLATFORMS } from '../src/platforms';
import { closeServices, createServices, migrate, type Services } from '../src/services';
import { round, timeCalls } from './helpers';
import { benchEnvironment, benchLogger } from './environment';
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
  const services = await createServices(env.config, log);
  let app: FastifyInstance | undefined;
  try {
    await migrate(services);
    app = await buildApp(services);
    const base = `${await app.listen({ host: '127.0.0.1', port: 0 })}/api/v1`;
    const brand = await setUpBrand(app, env.config);
    const firstDay = new Date(Date.now() - 395 * DAY_MS).toISOString().slice(0, 10);

    const seed = await seedWarehouse(services, brand, firstDay);
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

type BenchBrand = { id: string; key: string; visibleCampaigns: string[]; hiddenCampaigns: string[]; creators: string[] };

/** Brand, API key and campaigns through the internal endpoints; creators in bulk. */
async function setUpBrand(app: FastifyInstance, config: Config): Promise<BenchBrand> {
  const authorization = `Bearer ${signAdminToken(config.adminJwtSecret)}`;
  const post = async (url: string, payload: object) => {
    const res = await app.inject({ method: 'POST', url, payload, headers: { authorization } });
    if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const brand = await post('/api/internal/brands', { name: 'Bench' });
  const { key } = await post(`/api/internal/brands/${brand.id}/api-keys`, {});
  const campaign = async (i: number, visible: boolean) =>
    (await post('/api/internal/campaigns', { brand_id: brand.id, name: `Campaign ${i}`, visible })).id as string;
  const visibleCampaigns = [];
  for (let i = 0; i < VISIBLE_CAMPAIGNS; i++) visibleCampaigns.push(await campaign(i, true));
  const hiddenCampaigns = [await campaign(VISIBLE_CAMPAIGNS, false)];
  return { id: brand.id, key, visibleCampaigns, hiddenCampaigns, creators: [] };
}

/**
 * The formulas both stores are generated from. Placement i (p000000 ...) is posted on day
 * i*25 s after `first`, on PLATFORMS[i % 4] (instagram: shares null), in a visible campaign
 * except every 97th (hidden), by creator (7i mod N) except every 50th (none); its snapshot
 * on day d after posting has views base*(d+1)/(d+8) (integer division), likes a tenth,
 * comments a hundredth, shares a three-hundredth, base = 1000 + 7919i mod 50000.
 */
async function seedWarehouse(services: Services, brand: BenchBrand, firstDay: string) {
  const { warehouse: wh, db } = services;
  const t0 = performance.now();
  const creators = Array.from({ length: CREATORS }, (_, i) => ({
    id: randomUUID(),
    name: `Creator ${String(i).padStart(4, '0')}`,
    handles: [{ platform: PLATFORMS[i % 4]!, handle: `@creator${i}` }],
    followers: 1000 + i,
  }));
  // Straight into ClickHouse, as the creators writer would (the bench bypasses the queues).
  await wh.insert('creators', creators.map(creatorFact));
  for (let i = 0; i < creators.length; i += 1000) {
    await db
      .insertInto('creators')
      .values(creators.slice(i, i + 1000).map((c) => ({ ...c, handles: JSON.stringify(c.handles) })))
      .execute();
  }
  brand.creators.push(...creators.map((c) => c.id));

  const params = {
    brand: brand.id,
    first: firstDay,
    visible: brand.visibleCampaigns,
    hidden: brand.hiddenCampaigns,
    creators: brand.creators,
    platforms: [...PLATFORMS],
  };
  await wh.command(
    `INSERT INTO placements SETTINGS insert_deduplication_token = {token:String}
     SELECT {brand:String}, concat('p', leftPad(toString(number), 6, '0')),
            if(number % 97 = 0, {hidden:Array(String)}[1], {visible:Array(String)}[number % length({visible:Array(String)}) + 1]),
            if(number % 50 = 0, NULL, {creators:Array(String)}[(number * 7) % length({creators:Array(String)}) + 1]),
            {platforms:Array(String)}[number % 4 + 1],
            concat('https://example.com/p/', toString(number)), NULL, concat('Placement ', toString(number)),
            toDateTime64({first:Date}, 3, 'UTC') + toIntervalSecond(number * 25), 1
     FROM numbers(${PLACEMENTS})`,
    { ...params, token: randomUUID() },
  );
  const chunk = PLACEMENTS / 10;
  for (let from = 0; from < PLACEMENTS; from += chunk) {
    await wh.command(
      `INSERT INTO placement_snapshots SETTINGS insert_deduplication_token = {token:String}
       SELECT concat('p', leftPad(toString(i), 6, '0')), toDate({first:Date}) + intDiv(i * 25, 86400) + d,
              intDiv(base * (d + 1), d + 8), intDiv(base * (d + 1), 10 * (d + 8)), intDiv(base * (d + 1), 100 * (d + 8)),
              if(i % 4 = 0, NULL, intDiv(base * (d + 1), 300 * (d + 8))), 1
       FROM (SELECT {from:UInt64} + number % {chunk:UInt64} AS i, intDiv(number, {chunk:UInt64}) AS d,
                    1000 + (i * 7919) % 50000 AS base
             FROM numbers(${chunk * DAYS}))`,
      { first: firstDay, from, chunk, token: randomUUID() },
    );
  }
  const generated = performance.now();
  const ids = Array.from({ length: PLACEMENTS }, (_, i) => `p${String(i).padStart(6, '0')}`);
  await derivePlacements(wh, ids);
  const derived = performance.now();
  // What background merges do with time: measure a settled table.
  await wh.command('OPTIMIZE TABLE placement_activity FINAL');
  await wh.command('OPTIMIZE TABLE placement_totals FINAL');
  const [rows] = await wh.rows<{ snapshots: number; activity_rows: number }>(
    'SELECT (SELECT count() FROM placement_snapshots) AS snapshots, (SELECT count() FROM placement_activity) AS activity_rows',
  );
  return {
    placements: PLACEMENTS,
    ...rows!,
    generate_ms: round(generated - t0, 0),
    derive_ms: round(derived - generated, 0),
    merge_ms: round(performance.now() - derived, 0),
  };
}

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

