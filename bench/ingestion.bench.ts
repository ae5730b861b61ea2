import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from '../src/config';
import { signAdminToken } from '../src/http/admin-auth';
import type { Services } from '../src/services';
import { IPHONE, percentile, round, seedWebLink } from './helpers';
import { benchEnvironment, benchLogger, type InProcessService, startInProcess } from './environment';
import type { Bench } from './run';

/**
 * Ingestion under load: POST clicks, installs and events against the whole service as `npm start`
 * runs it, alternating with a bare route's ceiling; then the lag, and every answered request counted
 * in ClickHouse. Method and results: docs/benchmarks.md.
 */
export const names = ['ingestion-ceiling', 'ingestion-clicks', 'ingestion-installs', 'ingestion-events', 'ingestion-lag', 'ingestion-exactly-once'];

/**
 * Each load alternates with its ceiling in rounds (ceiling, then service, then a wait until
 * the service has written everything it accepted), and the figures sum the rounds: this
 * machine's speed drifts within seconds, so one long run of each, one after the other,
 * gave ratios that moved by a third from run to run. The wait keeps the workers' catching
 * up out of the next ceiling slice.
 */
const ROUNDS = 3;
const SLICE_S = 4;
const WARMUP_S = 2;
const CONNECTIONS = 64;

type LoadResult = {
  '2xx': number;
  non2xx: number;
  errors: number;
  duration: number;
  requests: { total: number; sent: number };
  latency: { p50: number; p99: number };
};
type LoadOptions = {
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: string;
  connections: number;
  duration: number;
  workers: number;
  /** Replaces `[<id>]` in the body with a fresh id per request. */
  idReplacement: boolean;
};
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: LoadOptions) => Promise<LoadResult>;


/** Requests answered per second in one slice. */
const rate = (r: LoadResult) => r.requests.total / r.duration;

/** The slices of one target's load: measured ones for the figures, all of them (warm-up too, since both write rows) for the counts. */
class Slices {
  readonly measured: LoadResult[] = [];
  answered = 0;
  sent = 0;
  failed = 0;

  constructor(
    private readonly url: string,
    private readonly body: object,
  ) {}

  async fire(seconds: number, measured: boolean): Promise<void> {
    const result = await autocannon({
      url: this.url,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(this.body),
      connections: CONNECTIONS,
      duration: seconds,
      workers: 1,
      idReplacement: true,
    });
    if (measured) this.measured.push(result);
    this.answered += result['2xx'];
    this.sent += result.requests.sent;
    this.failed += result.non2xx + result.errors;
  }

  /** Requests answered per second over the measured slices; latency: the median slice's p50, the worst slice's p99. */
  figures() {
    const sum = (pick: (r: LoadResult) => number) => this.measured.reduce((n, r) => n + pick(r), 0);
    return {
      requests_rps: round(sum((r) => r.requests.total) / sum((r) => r.duration), 0),
      p50_ms: percentile(this.measured.map((r) => r.latency.p50), 50),
      p99_ms: Math.max(...this.measured.map((r) => r.latency.p99)),
    };
  }
}

const KINDS = ['clicks', 'installs', 'events'] as const;
type Kind = (typeof KINDS)[number];

/** Where each load's facts go: their queue, ClickHouse table and id, and for installs and events the Postgres table that accepts them. */
const FACTS: Record<Kind, { queue: 'clicks' | 'installs' | 'ledger'; table: string; idColumn: string; accepted?: 'installs' | 'ledger_events' }> = {
  clicks: { queue: 'clicks', table: 'clicks', idColumn: 'click_token' },
  installs: { queue: 'installs', table: 'installs', idColumn: 'id', accepted: 'installs' },
  events: { queue: 'ledger', table: 'ledger', idColumn: 'id', accepted: 'ledger_events' },
};

/** `npm run bench -- ingestion-clicks` (or -installs, -events) runs that load alone; any other name runs all three. */
function selectedKinds(filter: string | undefined): Kind[] {
  const named = KINDS.filter((kind) => filter && `ingestion-${kind}`.includes(filter));
  return named.length > 0 ? named : [...KINDS];
}

/** The service's answer to one request of a load (with a fresh id where the load has one): what the bare route answers. */
async function sampleAnswer(app: FastifyInstance, url: string, body: object): Promise<unknown> {
  const payload = JSON.stringify(body).replace('[<id>]', randomUUID());
  const res = await app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } });
  if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

const bench: Bench = async (emit, filter) => {
  const kinds = selectedKinds(filter);
  // 1. The whole service, isolated.
  const env = benchEnvironment('ingestion');
  // One machine sends every request from one address: the per-IP limit is turned off, as an operator may for a load generator.
  env.config.rateLimits = { ...env.config.rateLimits, publicIp: 0 };
  const log = benchLogger(env.config.logLevel);
  let service: InProcessService | undefined;
  let bare: FastifyInstance | undefined;
  try {
    service = await startInProcess(env.config, log);
    const { services, app, base } = service;
    const brand = await setUpBrand(app, env.config);
    const api = `${base}/api/public/attribution`;
    const loads: Record<Kind, { path: string; body: object }> = {
      clicks: {
        path: '/clicks',
        body: {
          domain: brand.hostname,
          slug: 'maya',
          query: 'utm_source=tiktok&utm_medium=social&utm_campaign=launch',
          referrer: 'https://www.tiktok.com/',
          user_agent: IPHONE,
          country: 'US',
          ip: '203.0.113.7',
        },
      },
      installs: {
        path: '/installs',
        body: { pixel_key: brand.pixelKey, install_id: '[<id>]', platform: 'ios', clipboard_token: brand.clickToken, app_version: '2.4.1' },
      },
      events: {
        path: '/events',
        body: {
          pixel_key: brand.pixelKey,
          event_type: 'purchase',
          source: 'pixel',
          transaction_id: '[<id>]',
          click_token: brand.clickToken,
          amount: 19.99,
          currency: 'EUR',
        },
      },
    };

    // 2. The ceiling, per load: a bare Fastify route that parses the same request JSON (with
    // the same fresh id per request, which autocannon must build each time) and answers the
    // same JSON as the service, as captured from one request sent to it.
    bare = Fastify({ logger: false });
    for (const kind of kinds) {
      const answer = await sampleAnswer(app, `/api/public/attribution${loads[kind].path}`, loads[kind].body);
      bare.post(`/bare/${kind}`, async () => answer);
    }
    const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 });
    const ceilings: Slices[] = [];
    const running = services;
    const compared = async (kind: Kind) => {
      const ceiling = new Slices(`${bareUrl}/bare/${kind}`, loads[kind].body);
      const served = new Slices(`${api}${loads[kind].path}`, loads[kind].body);
      await ceiling.fire(WARMUP_S, false);
      await served.fire(WARMUP_S, false);
      await settled(running);
      for (let i = 0; i < ROUNDS; i++) {
        await ceiling.fire(SLICE_S, true);
        await served.fire(SLICE_S, true);
        await settled(running);
      }
      ceilings.push(ceiling);
      // The sampled request is one more accepted fact of this kind, and the set-up made one click of its own.
      const extra = kind === 'clicks' ? 2 : 1;
      served.answered += extra;
      served.sent += extra;
      const figures = served.figures();
      const baseline = ceiling.figures();
      emit({
        name: `ingestion-${kind}`,
        ...figures,
        baseline,
        ratio: round(figures.requests_rps / baseline.requests_rps),
        log_level: env.config.logLevel,
        rounds_ratio: served.measured.map((r, i) => round(rate(r) / rate(ceiling.measured[i]!))),
      });
      return served;
    };

    const loaded: Partial<Record<Kind, Slices>> = {};
    for (const kind of kinds) loaded[kind] = await compared(kind);
    const ceilingFigures = ceilings.map((c) => c.figures());
    emit({
      name: 'ingestion-ceiling',
      requests_rps: round(ceilingFigures.reduce((n, f) => n + f.requests_rps, 0) / ceilingFigures.length, 0),
      p99_ms: Math.max(...ceilingFigures.map((f) => f.p99_ms)),
      runs_rps: ceilingFigures.map((f) => f.requests_rps),
    });

    // 3. After the load: every accepted fact in ClickHouse, then lag and counts.
    await settled(services);
    emit({ name: 'ingestion-lag', ...(await lag(services, kinds)) });
    emit({ name: 'ingestion-exactly-once', ...(await exactlyOnce(services, brand.id, loaded)) });
  } finally {
    await bare?.close();
    await service?.close();
    await env.remove();
  }
};
export default bench;


/** A brand with a vanity domain, a web link and a click token, made through the internal endpoints. */
async function setUpBrand(app: FastifyInstance, config: Config) {
  const authorization = `Bearer ${signAdminToken(config.adminJwtSecret)}`;
  const post = async (url: string, payload: object, headers: Record<string, string> = { authorization }) => {
    const res = await app.inject({ method: 'POST', url, payload, headers });
    if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const { brand, hostname } = await seedWebLink(post);
  const clicked = await post('/api/public/attribution/clicks', { domain: hostname, slug: 'maya' }, {});
  return { id: brand.id as string, pixelKey: brand.pixel_key as string, hostname, clickToken: clicked.click_token as string };
}

/** Waits until the queues are empty and no fact is pending in the outbox. */
async function settled(services: Services) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const counts = await services.queues.counts();
    const open = Object.values(counts).reduce((n, c) => n + (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0), 0);
    const { n } = await services.db.selectFrom('fact_outbox').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    if (open === 0 && Number(n) === 0) return;
    if (Date.now() > deadline) throw new Error(`ingestion did not settle: ${JSON.stringify(counts)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Acceptance to queryable in ClickHouse: from the queue add (when a click is answered, and
 * right after an install or event is committed) to the job's completion, which follows
 * ClickHouse's acknowledgement of its batch. Over the last 5,000 jobs BullMQ keeps of each
 * kind, weighted by their rows.
 */
async function lag(services: Services, kinds: Kind[]) {
  const figures: Record<string, number> = {};
  for (const kind of kinds) {
    const jobs = await services.queues.queues[FACTS[kind].queue].getJobs(['completed'], 0, 4999);
    const lags = jobs.flatMap((j) => Array<number>(j.data.rows.length).fill((j.finishedOn ?? 0) - j.data.acceptedAt));
    figures[`${kind}_p50_ms`] = percentile(lags, 50);
    figures[`${kind}_p99_ms`] = percentile(lags, 99);
  }
  return figures;
}

/**
 * Answered requests against ClickHouse rows, per kind. Lost: answered but not in
 * ClickHouse (for installs and events also: recorded in Postgres but not in ClickHouse).
 * Doubled: rows beyond distinct ids. A request still in flight when a load stopped may be
 * accepted without its answer being counted, so rows may exceed answers (never requests sent).
 */
async function exactlyOnce(services: Services, brandId: string, loads: Partial<Record<Kind, Slices>>) {
  const counts: Record<string, object> = {};
  let lost = 0;
  let doubled = 0;
  let failed = 0;
  for (const [kind, load] of Object.entries(loads) as [Kind, Slices][]) {
    const { table, idColumn, accepted } = FACTS[kind];
    const [warehoused] = await services.warehouse.rows<{ rows: number; distinct: number }>(
      `SELECT count() AS rows, uniqExact(${idColumn}) AS distinct FROM ${table} WHERE brand_id = {b:String}`,
      { b: brandId },
    );
    const { rows, distinct } = warehoused!;
    if (accepted) {
      const postgres = Number(
        (await services.db.selectFrom(accepted).select((eb) => eb.fn.countAll().as('n')).where('brand_id', '=', brandId).executeTakeFirstOrThrow()).n,
      );
      counts[kind] = { answered: load.answered, sent: load.sent, postgres, rows, distinct };
      lost += Math.max(0, load.answered - postgres) + (postgres - distinct);
    } else {
      counts[kind] = { answered: load.answered, sent: load.sent, rows, distinct };
      lost += Math.max(0, load.answered - distinct);
    }
    doubled += rows - distinct;
    failed += load.failed;
  }
  return { ...counts, non_2xx_or_errors: failed, lost, doubled };
}
