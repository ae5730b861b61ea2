import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { deleteKeysByPrefix } from '../src/queues/redis';
import { START_NODE_FLAGS } from '../test/helpers/start-flags';
import { clientLoad } from './client-load';
import { benchEnvironment } from './environment';
import { IPHONE, percentile, round, seedWebLink } from './helpers';
import type { Bench } from './run';
import { adminPostJson, type CpuSlice, cpuFigures, cpuSlice, postJson, type ServiceProcess, startProcess, startServiceProcess } from './service-process';

/**
 * The service's POST /clicks, /installs and /events against a peer-shaped path on the same Postgres
 * and Redis (bench/peer-ingestion.ts: one BullMQ add per click, a unique insert plus one add per
 * install or event, no logging, limits or ClickHouse), at 50 and 200 connections: requests a second
 * and the machine's CPU per answer, alternating rounds. Method and results: docs/benchmarks.md.
 */
const KINDS = ['clicks', 'installs', 'events'] as const;
const CONNECTIONS = [50, 200] as const;
type Kind = (typeof KINDS)[number];
export const names = KINDS.flatMap((kind) => CONNECTIONS.map((c) => `ingestion-peer-${kind}-${c}c`));

const ROUNDS = 3;
const SLICE_S = 4;
const WARMUP_S = 2;
/** The targets: at least the peer's clicks a second, at most its CPU a click; installs and events reported against the same. */
const TARGET = { rps_ratio: '>= 1.0', cpu_ratio: '<= 1.0' };

/** `npm run bench -- ingestion-peer-clicks` (or `-clicks-50c`, `-events`, …) runs those loads alone. */
function selected(filter: string | undefined): { kind: Kind; connections: number }[] {
  const all = KINDS.flatMap((kind) => CONNECTIONS.map((connections) => ({ kind, connections })));
  const named = all.filter(({ kind, connections }) => filter && `ingestion-peer-${kind}-${connections}c`.includes(filter));
  return named.length > 0 ? named : all;
}

const bench: Bench = async (emit, filter) => {
  const env = benchEnvironment('peer');
  const peerPrefix = `${env.config.queuePrefix}_peer`;
  let service: ServiceProcess | undefined;
  let peer: ServiceProcess | undefined;
  const redis = new Redis(env.config.redisUrl);
  // Nothing consumes the peer's jobs: dropped after each of its slices, so its Redis never grows beyond one slice's.
  const dropPeerJobs = () => deleteKeysByPrefix(redis, peerPrefix);
  try {
    service = await startServiceProcess(env.config, { TRUST_PROXY: '127.0.0.1' });
    const { brand, hostname } = await seedWebLink(adminPostJson(service.base, env.config.adminJwtSecret));
    const { click_token: clickToken } = await postJson(service.base, '/api/public/attribution/clicks', { domain: hostname, slug: 'maya', user_agent: IPHONE });
    // The peer keeps its two tables in the service's bench database and its queues under a prefix of its own.
    peer = await startProcess(
      ['bench/peer-ingestion.ts'],
      { PEER_DATABASE_URL: env.config.databaseUrl, PEER_REDIS_URL: env.config.redisUrl, PEER_PREFIX: peerPrefix },
      START_NODE_FLAGS,
    );
    const bodies: Record<Kind, () => object> = {
      clicks: () => ({ domain: hostname, slug: 'maya', query: 'utm_source=tiktok&utm_campaign=launch', user_agent: IPHONE, country: 'US', ip: '203.0.113.7' }),
      installs: () => ({ pixel_key: brand.pixel_key, install_id: randomUUID(), platform: 'ios', clipboard_token: clickToken, app_version: '2.4.1' }),
      events: () => ({ pixel_key: brand.pixel_key, event_type: 'purchase', transaction_id: randomUUID(), click_token: clickToken, amount: 19.99, currency: 'EUR' }),
    };

    for (const { kind, connections } of selected(filter)) {
      const path = `/api/public/attribution/${kind}`;
      const slice = async (running: ServiceProcess, seconds: number) => {
        const figures = await cpuSlice(running.child, clientLoad(running.base, path, bodies[kind], connections, seconds));
        if (running === peer) await dropPeerJobs();
        return figures;
      };
      const served: CpuSlice[] = [];
      const baseline: CpuSlice[] = [];
      await slice(peer, WARMUP_S);
      await slice(service, WARMUP_S);
      for (let i = 0; i < ROUNDS; i++) {
        baseline.push(await slice(peer, SLICE_S));
        served.push(await slice(service, SLICE_S));
      }
      const [s, b] = [cpuFigures(served), cpuFigures(baseline)];
      // The machine's busy time counts other processes too (this machine is shared): the process's own CPU and the stores' are reported beside it.
      const own = (slices: CpuSlice[]) => round(slices.reduce((n, x) => n + x.serviceUs + x.postgresUs + x.redisUs, 0) / slices.reduce((n, x) => n + x.answered, 0), 0);
      const [sOwn, bOwn] = [own(served), own(baseline)];
      const rpsRounds = served.map((x, i) => round(x.rps / baseline[i]!.rps));
      const cpuRounds = served.map((x, i) => round(x.machineUs / x.answered / (baseline[i]!.machineUs / baseline[i]!.answered)));
      emit({
        name: `ingestion-peer-${kind}-${connections}c`,
        connections,
        requests_rps: s.requests_rps,
        cpu_per_request_us: s.cpu_per_request_us,
        process_and_stores_cpu_per_request_us: sOwn,
        p50_ms: s.p50_ms,
        p99_ms: s.p99_ms,
        baseline: { requests_rps: b.requests_rps, cpu_per_request_us: b.cpu_per_request_us, process_and_stores_cpu_per_request_us: bOwn, p50_ms: b.p50_ms, p99_ms: b.p99_ms },
        rps_ratio: round(s.requests_rps / b.requests_rps),
        cpu_ratio: round(s.cpu_per_request_us / b.cpu_per_request_us),
        process_and_stores_cpu_ratio: round(sOwn / bOwn),
        rps_ratio_median_round: percentile(rpsRounds, 50),
        cpu_ratio_median_round: percentile(cpuRounds, 50),
        rounds_rps_ratio: rpsRounds,
        rounds_cpu_ratio: cpuRounds,
        target: kind === 'clicks' ? TARGET : `reported against the same (${TARGET.rps_ratio} rps, ${TARGET.cpu_ratio} CPU)`,
        // This shared 2-core machine drifts: compare the medians of three alternating runs, within this much.
        tolerance_pct: 10,
        split_us: {
          http_thread: s.http_thread_cpu_per_request_us,
          service: s.service_cpu_per_request_us,
          postgres: s.postgres_cpu_per_request_us,
          redis: s.redis_cpu_per_request_us,
          peer_postgres: b.postgres_cpu_per_request_us,
          peer_redis: b.redis_cpu_per_request_us,
        },
      });
    }
  } finally {
    await peer?.stop();
    await service?.stop();
    await dropPeerJobs();
    await redis.quit();
    await env.remove();
  }
};
export default bench;
