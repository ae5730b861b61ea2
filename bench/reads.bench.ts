import { createRequire } from 'node:module';
import type { EventEmitter } from 'node:events';
import { buildApp } from '../src/app';
import { closeServices, createServices, migrate } from '../src/services';
import { benchEnvironment, benchLogger } from './environment';
import { adminPost, IPHONE, percentile, round, timeCalls } from './helpers';
import { type BenchBrand, seedPlacements, setUpBrand } from './placements-seed';
import { START_NODE_FLAGS } from '../test/helpers/start-flags';
import { postJson, type ServiceProcess, startProcess, startServiceProcess } from './service-process';
import type { Bench } from './run';

/**
 * The reads brands and their teams feel, on the service as `npm start` runs it (its own process,
 * default log level): every GET of the Data API and the portal on a small brand and its posts.csv,
 * the Data API's questions and posts.csv on a large one, and 16 dashboard clients at once, alone
 * and beside 1,500 clicks a second. Each figure is given with the answer cache on and off
 * (READ_CACHE_MB=0, `uncached_…`), each with its target; the baseline is a bare Fastify GET in
 * another process, measured in the same run. Method and results: docs/benchmarks.md ("Reads").
 */
export const names = ['reads-small', 'reads-large', 'dashboards'];

const LARGE = { placements: 10_000, days: 365, creators: 1_000 };
type Target = Record<string, number>;
/** Targets per figure name (prefix match, first wins): with the cache on, and off. */
const TARGETS: [prefix: string, cached: Target | undefined, uncached: Target | undefined][] = [
  ['reads-small-data-posts-csv', { p50_ms: 5 }, { p50_ms: 5 }],
  ['reads-small', { p50_ms: 5 }, undefined],
  ['reads-large-posts-csv', { ttfb_p50_ms: 20 }, { ttfb_p50_ms: 20 }],
  ['reads-large', { p50_ms: 20, p95_ms: 50 }, { p50_ms: 20, p95_ms: 50 }],
  ['dashboards-with-clicks', { p95_ms: 100, clicks_p99_ms: 50 }, undefined],
  ['dashboards', { p95_ms: 100 }, { p95_ms: 200 }],
];
const DASHBOARD_CLIENTS = 16;
const DASHBOARD_S = 10;
const CLICKS_RPS = 1500;
const CLICKS_WARMUP_S = 3;

type LoadOptions = {
  url: string;
  connections: number;
  duration: number;
  overallRate?: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  requests?: { method: 'GET'; path: string; headers: Record<string, string> }[];
};
type Autocannon = (opts: LoadOptions) => EventEmitter & PromiseLike<{ duration: number; errors: number }>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** A load from this process, every answer's latency kept (autocannon gives no p95). */
async function load(opts: LoadOptions) {
  const latencies: number[] = [];
  let failed = 0;
  const run = autocannon(opts);
  run.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) latencies.push(ms);
    else failed++;
  });
  const result = await run;
  return {
    answers: latencies.length,
    failed_requests: failed + result.errors,
    answers_rps: round(latencies.length / result.duration, 0),
    p50_ms: percentile(latencies, 50),
    p95_ms: percentile(latencies, 95),
    p99_ms: percentile(latencies, 99),
  };
}

/** Sequential GETs of one path: p50 and p95 of `runs` after `warmup`, and the first answer's time (before anything is cached). */
async function sequential(url: string, headers: Record<string, string>, runs: number, warmup = 3) {
  const { p50_ms, p95_ms, first_ms } = await timeCalls(
    async () => {
      const res = await fetch(url, { headers });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
    },
    { warmup, runs },
  );
  return { p50_ms, p95_ms, first_ms };
}

type Fixture = {
  small: { key: string; cookie: string };
  large: BenchBrand;
  clickDomain: string;
};

/** Every GET a small brand's tools and portal make (CSV exports, login and domain checks are not reads). */
const SMALL_READS = [
  ['data', '/brand'],
  ['data', '/metrics/summary'],
  ['data', '/metrics/daily'],
  ['data', '/posts'],
  ['data', '/creators'],
  ['portal', '/overview'],
  ['portal', '/links'],
  ['portal', '/codes'],
  ['portal', '/events'],
  ['portal', '/setup'],
  ['portal', '/domains'],
  ['portal', '/connections'],
] as const;

/** The large brand's questions: summary and daily in both attributions over three periods, posts and creators. */
const LARGE_READS = [
  ...['all', '30d', '6m'].flatMap((period) =>
    ['upload_date', 'view_date'].flatMap((attribution) =>
      ['/metrics/summary', '/metrics/daily'].map((path) => `${path}?period=${period}&attribution=${attribution}`),
    ),
  ),
  '/posts?period=all',
  '/creators?period=all',
];

/** What 16 dashboard clients cycle through: all with period=all. */
const DASHBOARD_READS = [
  '/metrics/summary?period=all&attribution=upload_date',
  '/metrics/summary?period=all&attribution=view_date',
  '/metrics/daily?period=all&attribution=upload_date',
  '/metrics/daily?period=all&attribution=view_date',
  '/metrics/daily?period=all&view_type=cumulative',
  '/posts?period=all&sort=views',
  '/creators?period=all&page=1',
  '/creators?period=all&page=4',
];

const bench: Bench = async (emit, filter) => {
  const selected = names.filter((n) => !filter || n.includes(filter));
  const env = benchEnvironment('reads');
  const log = benchLogger(env.config.logLevel);
  let service: ServiceProcess | undefined;
  try {
    const fixture = await seed(env.config, log, selected.some((n) => n !== 'reads-small'));
    // Limits off: one key and one portal session answer hundreds of reads a second here (both
    // passes within a minute when only reads-small runs); one address sends every click.
    const common = { RATE_LIMIT_DATA_API: '0', RATE_LIMIT_PORTAL: '0', RATE_LIMIT_PUBLIC_IP: '0' };
    const figures: Record<string, Record<string, Record<string, number>>> = { off: {}, on: {} };
    for (const cache of ['off', 'on'] as const) {
      service = await startServiceProcess(env.config, { ...common, READ_CACHE_MB: cache === 'off' ? '0' : '64' });
      await settled(service.base, fixture);
      figures[cache] = await measure(service.base, fixture, selected);
      await service.stop();
      service = undefined;
    }
    const baseline = await bareBaseline(selected.includes('dashboards'));
    for (const [name, on] of Object.entries(figures.on!)) {
      const off = Object.fromEntries(Object.entries(figures.off![name]!).map(([k, v]) => [`uncached_${k}`, v]));
      const [, target, uncachedTarget] = TARGETS.find(([prefix]) => name.startsWith(prefix))!;
      const p50 = on.p50_ms ?? on.ttfb_p50_ms!;
      emit({
        name,
        ...on,
        target,
        ...off,
        uncached_target: uncachedTarget,
        baseline: name.startsWith('dashboards') ? baseline.load! : baseline.sequential,
        ratio: round((off.uncached_p50_ms ?? off.uncached_ttfb_p50_ms!) / p50, 1),
      });
    }
  } finally {
    await service?.stop();
    await env.remove();
  }
};
export default bench;

/**
 * The brands, written before the service starts (embedded ClickHouse takes one process): the
 * large one straight into ClickHouse, the small one through the internal endpoints (its queued
 * facts wait in Redis for the service's workers), a portal session and a link for the clicks.
 */
async function seed(config: ReturnType<typeof benchEnvironment>['config'], log: ReturnType<typeof benchLogger>, large: boolean): Promise<Fixture> {
  const services = await createServices(config, log);
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  try {
    await migrate(services);
    app = await buildApp(services);
    const post = adminPost(app, config.adminJwtSecret);
    const brand = await post('/api/internal/brands', { name: 'Small' });
    const { key } = await post(`/api/internal/brands/${brand.id}/api-keys`, {});
    const campaign = await post('/api/internal/campaigns', { brand_id: brand.id, name: 'Launch' });
    const creator = await post('/api/internal/creators', { name: 'Maya Lopez', first_name: 'Maya', handles: [{ platform: 'tiktok', handle: '@maya' }] });
    const today = new Date();
    const day = (back: number) => new Date(today.getTime() - back * 86_400_000).toISOString().slice(0, 10);
    await post('/api/internal/placements', {
      placements: ['s1', 's2'].map((id, i) => ({ id, brand_id: brand.id, campaign_id: campaign.id, creator_id: creator.id, platform: 'tiktok', posted_at: `${day(5 + i)}T12:00:00Z` })),
    });
    await post('/api/internal/placement-metrics', {
      snapshots: ['s1', 's2'].flatMap((id) => [0, 1, 2, 3].map((d) => ({ placement_id: id, date: day(d), views: 1000 - d * 100, likes: 50, comments: 5, shares: 2 }))),
    });
    const clickDomain = `small-${brand.id.slice(0, 6)}.bench`.toLowerCase();
    const domain = await post('/api/internal/attribution-domains', { hostname: clickDomain, brand_id: brand.id });
    await post('/api/internal/attribution-links', { brand_id: brand.id, creator_id: creator.id, domain_id: domain.id, slug: 'maya', type: 'web', destination_url: 'https://small.example/' });
    await post('/api/internal/attribution-codes', { brand_id: brand.id, creator_id: creator.id, label: 'MAYA' });
    await post(`/api/internal/brands/${brand.id}/portal-users`, { email: 'owner@small.bench', password: 'a long enough password' });
    const login = await app.inject({ method: 'POST', url: '/api/client/auth/login', payload: { email: 'owner@small.bench', password: 'a long enough password' } });
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    for (let i = 0; i < 20; i++) await app.inject({ method: 'POST', url: '/api/public/attribution/clicks', payload: { domain: clickDomain, slug: 'maya', user_agent: IPHONE } });
    await app.inject({ method: 'POST', url: '/api/public/attribution/events', payload: { pixel_key: brand.pixel_key, transaction_id: 'o-1', amount: 19.99, code: 'MAYA' } });

    let largeBrand = { id: '', key: '', visibleCampaigns: [], hiddenCampaigns: [], creators: [] } as BenchBrand;
    if (large) {
      largeBrand = await setUpBrand(app, config, 20);
      const firstDay = new Date(Date.now() - (LARGE.days + 30) * 86_400_000).toISOString().slice(0, 10);
      await seedPlacements(services, largeBrand, firstDay, LARGE);
    }
    return { small: { key, cookie }, large: largeBrand, clickDomain };
  } finally {
    await app?.close();
    await closeServices(services);
  }
}

/** Waits until the service's workers have written the small brand's queued placements and clicks. */
async function settled(base: string, f: Fixture) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const summary = (await fetch(`${base}/api/v1/metrics/summary`, { headers: { authorization: `Bearer ${f.small.key}` } }).then((r) => r.json())) as {
      data?: { posts: number };
    };
    const overview = (await fetch(`${base}/api/client/attribution/overview`, { headers: { cookie: f.small.cookie } }).then((r) => r.json())) as {
      clicks?: number;
      conversions?: number;
    };
    if (summary.data?.posts === 2 && (overview.clicks ?? 0) >= 20 && overview.conversions === 1) return;
    if (Date.now() > deadline) throw new Error(`the small brand's facts did not land: ${JSON.stringify({ summary, overview })}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The machine's floor in this run: a bare Fastify GET in another process, one at a time and (dashboards) from 16 clients. */
async function bareBaseline(withLoad: boolean) {
  const bare = await startProcess(['bench/bare-route.ts'], {}, START_NODE_FLAGS);
  try {
    const { p50_ms, p95_ms } = await sequential(`${bare.base}/healthz`, {}, 50);
    if (!withLoad) return { sequential: { p50_ms, p95_ms } };
    const { answers_rps, p95_ms: load_p95_ms } = await load({ url: `${bare.base}/healthz`, connections: DASHBOARD_CLIENTS, duration: DASHBOARD_S });
    return { sequential: { p50_ms, p95_ms }, load: { answers_rps, p95_ms: load_p95_ms } };
  } finally {
    await bare.stop();
  }
}

/**
 * A CSV export downloaded whole `runs` times after a warm-up: time to its first byte and to its
 * last (p50 and p95), and its rows. CSV answers are never cached: each is a fresh export.
 */
async function csvExport(url: string, headers: Record<string, string>, runs: number) {
  const ttfb: number[] = [];
  const total: number[] = [];
  let rows = 0;
  for (let i = 0; i <= runs; i++) {
    const t0 = performance.now();
    const res = await fetch(url, { headers });
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
    const reader = res.body!.getReader();
    let first = 0;
    let lines = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      first ||= performance.now() - t0;
      for (let at = value.indexOf(10); at !== -1; at = value.indexOf(10, at + 1)) lines++;
    }
    if (i === 0) continue; // the warm-up
    ttfb.push(first);
    total.push(performance.now() - t0);
    rows = lines - 1;
  }
  return { rows, ttfb_p50_ms: percentile(ttfb, 50), ttfb_p95_ms: percentile(ttfb, 95), p50_ms: percentile(total, 50), p95_ms: percentile(total, 95) };
}

async function measure(base: string, f: Fixture, selected: string[]) {
  const out: Record<string, Record<string, number>> = {};
  const smallKey = { authorization: `Bearer ${f.small.key}` };
  if (selected.includes('reads-small')) {
    for (const [api, path] of SMALL_READS) {
      const url = api === 'data' ? `${base}/api/v1${path}` : `${base}/api/client/attribution${path}`;
      out[`reads-small-${api}${path.replaceAll('/', '-')}`] = await sequential(url, api === 'data' ? smallKey : { cookie: f.small.cookie }, 50);
    }
    out['reads-small-data-posts-csv'] = await csvExport(`${base}/api/v1/posts.csv`, smallKey, 50);
  }
  const largeKey = { authorization: `Bearer ${f.large.key}` };
  if (selected.includes('reads-large')) {
    for (const path of LARGE_READS) {
      const name = `reads-large${path.replace(/[/?&=]+/g, '-')}`;
      out[name] = await sequential(`${base}/api/v1${path}`, largeKey, 20, 1);
    }
    // Every placement of the large brand in its visible campaigns: 9,896 rows.
    out['reads-large-posts-csv'] = await csvExport(`${base}/api/v1/posts.csv`, largeKey, 10);
  }
  if (selected.includes('dashboards')) {
    const dashboards = () =>
      load({
        url: base,
        connections: DASHBOARD_CLIENTS,
        duration: DASHBOARD_S,
        requests: DASHBOARD_READS.map((path) => ({ method: 'GET', path: `/api/v1${path}`, headers: largeKey })),
      });
    const clickBody = { domain: f.clickDomain, slug: 'maya', user_agent: IPHONE, query: 'utm_source=tiktok' };
    const clicks = (url: string, seconds = DASHBOARD_S) =>
      load({
        url: `${url}/api/public/attribution/clicks`,
        // Enough connections that the rate holds while answers slow down (an open load, as visitors are).
        connections: 64,
        duration: seconds,
        overallRate: CLICKS_RPS,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(clickBody),
      });
    // The click path warmed up first, as the dashboards' is by their run alone: a fresh process's
    // first clicks read the link, compile their code and create the clicks' first parts.
    await clicks(base, CLICKS_WARMUP_S);
    const alone = await dashboards();
    out.dashboards = { ...alone };
    const [beside, clickLoad] = await Promise.all([dashboards(), clicks(base)]);
    // The machine's own tail: a bare Fastify route answering the same clicks beside the same dashboards.
    const bare = await startProcess(
      ['bench/bare-route.ts'],
      { BARE_ANSWERS: JSON.stringify({ '/api/public/attribution/clicks': await postJson(base, '/api/public/attribution/clicks', clickBody) }) },
      START_NODE_FLAGS,
    );
    try {
      await clicks(bare.base, CLICKS_WARMUP_S);
      const [, bareClicks] = await Promise.all([dashboards(), clicks(bare.base)]);
      out['dashboards-with-clicks'] = {
        ...beside,
        clicks_rps: clickLoad.answers_rps,
        clicks_p99_ms: clickLoad.p99_ms,
        clicks_failed_requests: clickLoad.failed_requests,
        bare_route_clicks_p99_ms: bareClicks.p99_ms,
      };
    } finally {
      await bare.stop();
    }
  }
  return out;
}
