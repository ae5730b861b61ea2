
import { sql } from 'kysely';
import { buildApp } from '../src/app';
import { addDays, todayUtc } from '../src/http/query';
import { signAdminToken } from '../src/http/admin-auth';
import { createLogger } from '../src/logger';
import { linkTotals } from '../src/attribution/reporting/totals';
import { overview } from '../src/portal/overview.queries';
import { totalsRange } from '../src/portal/range';
import { closeServices, createServices, migrate } from '../src/services';
import { percentile, round } from './helpers';
import { benchEnvironment } from './environment';
import type { Bench } from './run';

/**
 * Portal /overview and /links for a brand with 1,000 links and 10 million clicks, against Postgres
 * over the same rows: `ratio` to the ClickHouse aggregates alone, `endpoint_ratio` to the whole
 * request. Results: docs/benchmarks.md.
 */
export const names = ['portal /overview', 'portal /links'];

const LINKS = 1000;
const CLICKS = 10_000_000;
const OTHER_BRAND_CLICKS = 1_000_000;
const INSTALLS = 3000;
const LEDGER_ROWS = 5000;
const YEAR_MS = 365 * 86_400_000;

const bench: Bench = async (emit, filter) => {
  const env = benchEnvironment('portal');
  // The set-up loads 11 million Postgres rows a statement at a time: past the request path's statement timeout.
  // The answer cache is off: this bench measures the reads themselves (the reads bench measures the cache).
  const config = { ...env.config, timeouts: { ...env.config.timeouts, pgStatementMs: 600_000 }, readCacheBytes: 0 };
  const services = await createServices(config, createLogger('silent'));
  try {
    await migrate(services);
    const app = await buildApp(services);
    const { db, warehouse } = services;
    const admin = { authorization: `Bearer ${signAdminToken(config.adminJwtSecret)}` };

    // Set-up: two brands, their portal user, 1,000 links of brand A over 50 creators.
    const brandOf = async (name: string) =>
      (await app.inject({ method: 'POST', url: '/api/internal/brands', headers: admin, payload: { name } })).json().id as string;
    const brand = await brandOf('Bench');
    const other = await brandOf('Other');
    const password = 'bench password long enough';
    await app.inject({ method: 'POST', url: `/api/internal/brands/${brand}/portal-users`, headers: admin, payload: { email: 'bench@svc.bench', password } });
    const login = await app.inject({ method: 'POST', url: '/api/client/auth/login', payload: { email: 'bench@svc.bench', password } });
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const creators = Array.from({ length: 50 }, (_, i) => ({ id: `creator-${i}`, name: `Creator ${i}`, handles: '[]' }));
    await db.insertInto('creators').values(creators).execute();
    await db.insertInto('domains').values({ id: 'bench-domain', hostname: 'go.bench.test', brand_id: null, verification_token: 'x' }).execute();
    const links = await db
      .insertInto('links')
      .values(
        Array.from({ length: LINKS }, (_, i) => ({
          brand_id: brand,
          creator_id: `creator-${i % 50}`,
          domain_id: 'bench-domain',
          slug: `l${i}`,
          type: 'web' as const,
          destination_url: 'https://bench.example/',
        })),
      )
      .returning('id')
      .execute();
    const firstLink = Math.min(...links.map((l) => Number(l.id)));

    // The same facts in ClickHouse and in Postgres, generated from the row number n.
    const today = todayUtc();
    const yearStart = new Date(`${addDays(today, -364)}T00:00:00Z`).getTime();
    const p = { brand, other, firstLink, links: LINKS, start: yearStart, year: YEAR_MS };
    const t0 = performance.now();
    await warehouse.command(
      `INSERT INTO clicks (brand_id, link_id, creator_id, click_token, clicked_at, domain, slug, link_type, platform, country)
       SELECT {brand:String}, {firstLink:UInt64} + number % {links:UInt64}, '', concat('svc_bench_', toString(number)),
              fromUnixTimestamp64Milli(toInt64({start:Int64} + intDiv(number * {year:Int64}, {n:UInt64})), 'UTC'),
              'go.bench.test', '', 'web', 'ios', 'US'
       FROM numbers({n:UInt64})`,
      { ...p, n: CLICKS },
    );
    await warehouse.command(
      `INSERT INTO clicks (brand_id, link_id, creator_id, click_token, clicked_at, link_type)
       SELECT {other:String}, 100000 + number % 100, '', concat('svc_other_', toString(number)),
              fromUnixTimestamp64Milli(toInt64({start:Int64} + intDiv(number * {year:Int64}, {n:UInt64})), 'UTC'), 'web'
       FROM numbers({n:UInt64})`,
      { ...p, n: OTHER_BRAND_CLICKS },
    );
    await warehouse.command(
      `INSERT INTO installs (brand_id, id, install_id, platform, attributed, resolution_method, link_id, occurred_at, recorded_at)
       SELECT {brand:String}, concat('i', toString(number)), concat('device-', toString(number)), 'ios', number % 3 != 0,
              if(number % 3 = 0, 'unattributed', 'clipboard'), if(number % 3 = 0, NULL, {firstLink:UInt64} + number % {links:UInt64}),
              fromUnixTimestamp64Milli(toInt64({start:Int64} + intDiv(number * {year:Int64}, {n:UInt64})), 'UTC'), now64(3)
       FROM numbers({n:UInt64})`,
      { ...p, n: INSTALLS },
    );
    await warehouse.command(
      `INSERT INTO ledger (brand_id, id, event_type, transaction_id, amount, currency, source, link_id, resolution_method, sandbox, occurred_at, recorded_at)
       SELECT {brand:String}, concat('e', toString(number)), if(number % 10 = 0, 'refund', 'purchase'), concat('t', toString(number)),
              toDecimal64(if(number % 10 = 0, -1, 1) * ((number * 37) % 10000), 4) / 100, ['USD', 'EUR', 'GBP'][number % 3 + 1], 'pixel',
              {firstLink:UInt64} + number % {links:UInt64}, 'click', number % 50 = 0,
              fromUnixTimestamp64Milli(toInt64({start:Int64} + intDiv(number * {year:Int64}, {n:UInt64})), 'UTC'), now64(3)
       FROM numbers({n:UInt64})`,
      { ...p, n: LEDGER_ROWS },
    );
    const clickhouseLoadS = (performance.now() - t0) / 1000;

    const t1 = performance.now();
    await sql`CREATE TABLE bench_clicks (brand_id text NOT NULL, link_id bigint NOT NULL, clicked_at timestamptz NOT NULL)`.execute(db);
    await sql`CREATE TABLE bench_installs (brand_id text NOT NULL, link_id bigint, occurred_at timestamptz NOT NULL)`.execute(db);
    await sql`CREATE TABLE bench_ledger (brand_id text NOT NULL, link_id bigint, event_type text NOT NULL, amount numeric(18, 4) NOT NULL,
      currency text NOT NULL, sandbox boolean NOT NULL, occurred_at timestamptz NOT NULL)`.execute(db);
    const at = (n: string, count: number) => sql.raw(`to_timestamp((${yearStart} + (${n}::bigint * ${YEAR_MS}) / ${count}) / 1000.0)`);
    await sql`INSERT INTO bench_clicks SELECT ${brand}, ${firstLink}::bigint + n % ${LINKS}, ${at('n', CLICKS)} FROM generate_series(0, ${CLICKS - 1}) n`.execute(db);
    await sql`INSERT INTO bench_clicks SELECT ${other}, 100000 + n % 100, ${at('n', OTHER_BRAND_CLICKS)} FROM generate_series(0, ${OTHER_BRAND_CLICKS - 1}) n`.execute(db);
    await sql`INSERT INTO bench_installs SELECT ${brand}, CASE WHEN n % 3 = 0 THEN NULL ELSE ${firstLink}::bigint + n % ${LINKS} END, ${at('n', INSTALLS)}
      FROM generate_series(0, ${INSTALLS - 1}) n`.execute(db);
    await sql`INSERT INTO bench_ledger SELECT ${brand}, ${firstLink}::bigint + n % ${LINKS}, CASE WHEN n % 10 = 0 THEN 'refund' ELSE 'purchase' END,
      (CASE WHEN n % 10 = 0 THEN -1 ELSE 1 END) * ((n * 37) % 10000) / 100.0, (ARRAY['USD', 'EUR', 'GBP'])[n % 3 + 1], n % 50 = 0, ${at('n', LEDGER_ROWS)}
      FROM generate_series(0, ${LEDGER_ROWS - 1}) n`.execute(db);
    await sql`CREATE INDEX ON bench_clicks (brand_id, clicked_at) INCLUDE (link_id)`.execute(db);
    await sql`CREATE INDEX ON bench_clicks (brand_id, link_id, clicked_at)`.execute(db);
    await sql`CREATE INDEX ON bench_installs (brand_id, occurred_at)`.execute(db);
    await sql`CREATE INDEX ON bench_ledger (brand_id, occurred_at)`.execute(db);
    await sql`VACUUM ANALYZE bench_clicks, bench_installs, bench_ledger`.execute(db);
    const postgresLoadS = (performance.now() - t1) / 1000;

    // The questions: a year, compared with the year before (overview); a page of 100 links (links).
    const range = `start_date=${addDays(today, -364)}&end_date=${today}`;
    const get = async (url: string) => {
      const res = await app.inject({ method: 'GET', url, headers: { cookie } });
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
      return res.json();
    };
    const from = new Date(yearStart - YEAR_MS);
    const start = new Date(yearStart);
    const end = new Date(`${addDays(today, 1)}T00:00:00Z`);
    const pageIds = Array.from({ length: 100 }, (_, i) => firstLink + i);

    const pgOverview = () =>
      Promise.all([
        sql`SELECT count(*) FILTER (WHERE clicked_at >= ${start}) AS current, count(*) FILTER (WHERE clicked_at < ${start}) AS previous
            FROM bench_clicks WHERE brand_id = ${brand} AND clicked_at >= ${from} AND clicked_at < ${end}`.execute(db),
        sql`SELECT count(*) FILTER (WHERE occurred_at >= ${start}) AS current, count(*) FILTER (WHERE occurred_at < ${start}) AS previous
            FROM bench_installs WHERE brand_id = ${brand} AND occurred_at >= ${from} AND occurred_at < ${end}`.execute(db),
        sql`SELECT currency, occurred_at >= ${start} AS current, count(*) FILTER (WHERE event_type <> 'refund') AS conversions,
                   round(sum(amount), 2) AS revenue, round(sum(-amount) FILTER (WHERE event_type = 'refund'), 2) AS refunds
            FROM bench_ledger WHERE brand_id = ${brand} AND NOT sandbox AND occurred_at >= ${from} AND occurred_at < ${end}
            GROUP BY 1, 2`.execute(db),
      ]);
    const pgLinks = () =>
      Promise.all([
        sql`SELECT link_id, count(*) FROM bench_clicks
            WHERE brand_id = ${brand} AND link_id = ANY(${pageIds}) AND clicked_at >= ${start} AND clicked_at < ${end} GROUP BY link_id`.execute(db),
        sql`SELECT link_id, count(*) FROM bench_installs
            WHERE brand_id = ${brand} AND link_id = ANY(${pageIds}) AND occurred_at >= ${start} AND occurred_at < ${end} GROUP BY link_id`.execute(db),
        sql`SELECT link_id, currency, count(*) FILTER (WHERE event_type <> 'refund'), round(sum(amount), 2) FROM bench_ledger
            WHERE brand_id = ${brand} AND NOT sandbox AND link_id = ANY(${pageIds}) AND occurred_at >= ${start} AND occurred_at < ${end}
            GROUP BY 1, 2`.execute(db),
      ]);

    // Both sides must agree before they are timed.
    const checked = await get(`/api/client/attribution/overview?${range}`);
    const [pgClicks] = await pgOverview();
    const pgCurrent = Number((pgClicks.rows[0] as { current: string }).current);
    if (checked.clicks !== pgCurrent || checked.clicks !== CLICKS) throw new Error(`clicks differ: portal ${checked.clicks}, Postgres ${pgCurrent}`);
    const linksPage = await get(`/api/client/attribution/links?${range}&limit=100`);
    if (linksPage.data.length !== 100 || linksPage.data[0].clicks !== CLICKS / LINKS) throw new Error('links page differs');

    const days = { start_date: addDays(today, -364), end_date: today };
    const pageLinks = pageIds.map((id) => ({ id, brand_id: brand }));
    const questions = [
      {
        name: 'portal /overview',
        endpoint: () => get(`/api/client/attribution/overview?${range}`),
        clickhouse: () => overview(warehouse, brand, days),
        postgres: pgOverview,
      },
      {
        name: 'portal /links',
        endpoint: () => get(`/api/client/attribution/links?${range}&limit=100`),
        clickhouse: () => linkTotals(warehouse, pageLinks, totalsRange(days)),
        postgres: pgLinks,
      },
    ];
    for (const q of questions) {
      if (filter && !q.name.includes(filter)) continue;
      const [endpoint, ch, pg] = await interleaved([q.endpoint, q.clickhouse, q.postgres]);
      emit({
        name: q.name,
        ...endpoint,
        clickhouse_p50_ms: ch.p50_ms,
        clickhouse_p95_ms: ch.p95_ms,
        baseline: { postgres_p50_ms: pg.p50_ms, postgres_p95_ms: pg.p95_ms },
        ratio: round(pg.p50_ms / ch.p50_ms, 1),
        endpoint_ratio: round(pg.p50_ms / endpoint.p50_ms, 1),
        clicks: CLICKS,
        links: LINKS,
        range_days: 365,
        clickhouse_load_s: round(clickhouseLoadS, 1),
        postgres_load_s: round(postgresLoadS, 1),
      });
    }
    await app.close();
  } finally {
    await closeServices(services);
    await env.remove();
  }
};
export default bench;

/**
 * Latency percentiles of several calls timed in turn, run after run, so that all of them meet
 * the same load (other processes share this machine's two cores).
 */
type Percentiles = { p50_ms: number; p95_ms: number; p99_ms: number };

async function interleaved<C extends (() => Promise<unknown>)[]>(calls: [...C], warmup = 3, runs = 30) {
  const samples = calls.map(() => [] as number[]);
  for (let i = 0; i < warmup + runs; i++) {
    for (const [k, call] of calls.entries()) {
      const t0 = performance.now();
      await call();
      if (i >= warmup) samples[k]!.push(performance.now() - t0);
    }
  }
  return samples.map((s): Percentiles => ({ p50_ms: percentile(s, 50), p95_ms: percentile(s, 95), p99_ms: percentile(s, 99) })) as {
    [K in keyof C]: Percentiles;
  };
}
