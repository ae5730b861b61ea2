import { createRequire } from 'node:module';
import { benchEnvironment } from './environment';
import { IPHONE, round, seedWebLink } from './helpers';
import { adminPostJson, type CpuSlice, cpuFigures, cpuSlice, type ServiceProcess, startServiceProcess } from './service-process';
import type { Bench } from './run';

/**
 * The link host's CPU per visit against POST /clicks (at most 1.2 times), the machine's
 * and the service process's, on the service as `npm start` runs it, the two loads alternating in
 * rounds. Method and results: docs/link-host.md ("Cost").
 */
export const names = ['link-host'];

const ROUNDS = 3;
const SLICE_S = 4;
const WARMUP_S = 2;
const CONNECTIONS = 50;
const TARGET_RATIO = 1.2;

type LoadResult = { '2xx': number; '3xx': number; non2xx: number; errors: number; duration: number; latency: { p50: number; p99: number } };
type LoadOptions = { url: string; method: 'GET' | 'POST'; headers: Record<string, string>; body?: string; connections: number; duration: number; workers: number };
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: LoadOptions) => Promise<LoadResult>;

/** One load of CONNECTIONS for `seconds`, its CPU counted (bench/service-process.ts); every visit must be answered. */
const slice = (service: ServiceProcess, opts: Omit<LoadOptions, 'connections' | 'duration' | 'workers'>, seconds: number) =>
  cpuSlice(service.child, async () => {
    const r = await autocannon({ ...opts, connections: CONNECTIONS, duration: seconds, workers: 1 });
    const answered = r['2xx'] + r['3xx'];
    if (answered === 0 || r.errors > 0 || r.non2xx > r['3xx']) throw new Error(`${opts.method} ${opts.url}: ${JSON.stringify(r)}`);
    return { answered, duration: r.duration, p50: r.latency.p50, p99: r.latency.p99 };
  });

const bench: Bench = async (emit) => {
  const env = benchEnvironment('linkhost');
  const { config } = env;
  let service: ServiceProcess | undefined;
  try {
    // As `npm start` runs: default log level, one process; one load generator on one address, so the per-IP limit is off.
    service = await startServiceProcess(config, { RATE_LIMIT_PUBLIC_IP: '0' });
    const { base } = service;
    const { hostname } = await seedWebLink(adminPostJson(base, config.adminJwtSecret));
    const loads = {
      post: {
        url: `${base}/api/public/attribution/clicks`,
        method: 'POST' as const,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ domain: hostname, slug: 'maya', query: 'utm_source=tiktok&utm_campaign=launch', user_agent: IPHONE, country: 'US', ip: '203.0.113.7' }),
      },
      get: {
        url: `${base}/maya?utm_source=tiktok&utm_campaign=launch`,
        method: 'GET' as const,
        headers: { host: hostname, 'user-agent': IPHONE, 'cf-ipcountry': 'US' },
      },
    };
    await slice(service, loads.post, WARMUP_S);
    await slice(service, loads.get, WARMUP_S);
    const measured = { post: [] as CpuSlice[], get: [] as CpuSlice[] };
    for (let i = 0; i < ROUNDS; i++) {
      measured.post.push(await slice(service, loads.post, SLICE_S));
      measured.get.push(await slice(service, loads.get, SLICE_S));
    }
    const get = cpuFigures(measured.get);
    const post = cpuFigures(measured.post);
    emit({
      name: 'link-host',
      ...get,
      baseline: post,
      ratio: round(get.cpu_per_request_us / post.cpu_per_request_us),
      service_ratio: round(get.service_cpu_per_request_us / post.service_cpu_per_request_us),
      target_ratio: TARGET_RATIO,
    });
  } finally {
    await service?.stop();
    await env.remove();
  }
};
export default bench;
