import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { RateLimiter } from '../src/http/rate-limit';
import { clientLoad, nextClientAddress } from './client-load';
import { benchEnvironment } from './environment';
import { IPHONE, round, seedWebLink } from './helpers';
import { START_NODE_FLAGS } from '../test/helpers/start-flags';
import { adminPostJson, type CpuSlice, cpuFigures, cpuSlice, postJson, type ServiceProcess, startProcess, startServiceProcess } from './service-process';
import type { Bench } from './run';

/**
 * CPU per accepted request of POST /clicks, /installs and /events: the whole
 * machine's busy time over a load and its tail, less the load generator's own, divided by the
 * answers; held against a bare Fastify route's in the same run (alternating rounds, since the
 * machine drifts). The service runs as `npm start` does, default log level, rate limits on, each
 * request from its own client address (X-Forwarded-For behind TRUST_PROXY), with the split of
 * that CPU (cpuFigures). The limiter's own cost is measured apart (limiterCost). Results: docs/benchmarks.md.
 */
export const names = ['ingestion-cpu-clicks', 'ingestion-cpu-installs', 'ingestion-cpu-events', 'ingestion-cpu-limiter'];

const ROUNDS = 3;
const SLICE_S = 4;
const WARMUP_S = 2;
const CONNECTIONS = 50;
const TARGET = { clicks: 3.5, installs: 4.5, events: 4.5 };
const TARGET_P99_MS = 50;

type Kind = keyof typeof TARGET;

/** `npm run bench -- ingestion-cpu-clicks` (or -installs, -events) runs that load alone (with the limiter's cost). */
const selectedKinds = (filter: string | undefined) => {
  const named = (Object.keys(TARGET) as Kind[]).filter((kind) => filter && `ingestion-cpu-${kind}`.includes(filter));
  return named.length > 0 ? named : (Object.keys(TARGET) as Kind[]);
};

const bench: Bench = async (emit, filter) => {
  const kinds = selectedKinds(filter);
  const env = benchEnvironment('ingestcpu');
  let service: ServiceProcess | undefined;
  let bare: ServiceProcess | undefined;
  try {
    // One machine names its clients with X-Forwarded-For (docs/hardening.md#who-may-name-a-clicks-ip): the service trusts this address.
    service = await startServiceProcess(env.config, { TRUST_PROXY: '127.0.0.1' });
    const { brand, hostname } = await seedWebLink(adminPostJson(service.base, env.config.adminJwtSecret));
    const { click_token: clickToken } = await postJson(service.base, '/api/public/attribution/clicks', { domain: hostname, slug: 'maya', user_agent: IPHONE });
    const bodies: Record<Kind, () => object> = {
      clicks: () => ({ domain: hostname, slug: 'maya', query: 'utm_source=tiktok&utm_campaign=launch', user_agent: IPHONE, country: 'US', ip: '203.0.113.7' }),
      installs: () => ({ pixel_key: brand.pixel_key, install_id: randomUUID(), platform: 'ios', clipboard_token: clickToken, app_version: '2.4.1' }),
      events: () => ({ pixel_key: brand.pixel_key, event_type: 'purchase', transaction_id: randomUUID(), click_token: clickToken, amount: 19.99, currency: 'EUR' }),
    };
    const path = (kind: Kind) => `/api/public/attribution/${kind}`;
    // The bare route answers each path with the service's own answer.
    const answers: Record<string, unknown> = {};
    for (const kind of Object.keys(TARGET) as Kind[]) answers[path(kind)] = await postJson(service.base, path(kind), bodies[kind]());
    bare = await startProcess(['bench/bare-route.ts'], { BARE_ANSWERS: JSON.stringify(answers) }, START_NODE_FLAGS);

    let bareUs = 0;
    for (const kind of kinds) {
      // Slices of the service's and the bare route's load, alternating.
      const slice = (running: ServiceProcess, seconds: number) => cpuSlice(running.child, clientLoad(running.base, path(kind), bodies[kind], CONNECTIONS, seconds));
      const served: CpuSlice[] = [];
      const ceiling: CpuSlice[] = [];
      await slice(bare, WARMUP_S);
      await slice(service, WARMUP_S);
      for (let i = 0; i < ROUNDS; i++) {
        ceiling.push(await slice(bare, SLICE_S));
        served.push(await slice(service, SLICE_S));
      }
      const [servedFigures, ceilingFigures] = [cpuFigures(served), cpuFigures(ceiling)];
      bareUs ||= ceilingFigures.cpu_per_request_us;
      emit({
        name: `ingestion-cpu-${kind}`,
        ...servedFigures,
        baseline: ceilingFigures,
        ratio: round(servedFigures.cpu_per_request_us / ceilingFigures.cpu_per_request_us),
        target_ratio: TARGET[kind],
        target_p99_ms: TARGET_P99_MS,
        log_level: env.config.logLevel,
      });
    }

    // The limiter's share of a request, against the bare route's whole cost measured in this run; reported, with no target.
    const limiter = await limiterCost(env.config);
    emit({
      name: 'ingestion-cpu-limiter',
      ...limiter,
      baseline: { bare_route_cpu_per_request_us: bareUs },
      ratio: round(limiter.limiter_cpu_per_request_us / bareUs),
      target: 'reported only',
    });
  } finally {
    await bare?.stop();
    await service?.stop();
    await env.remove();
  }
};
export default bench;

/** Redis's own CPU so far, in µs (INFO cpu). */
async function redisCpuUs(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
}

/**
 * The per-IP limiter's CPU per request, this process's and Redis's, over 200,000 requests from
 * as many addresses (each a new count, the dearest case), 50 at a time as the loads send them.
 */
async function limiterCost(config: ReturnType<typeof benchEnvironment>['config']) {
  const redis = new Redis(config.redisUrl);
  try {
    const limiter = new RateLimiter(redis, { prefix: `${config.queuePrefix}:limiter`, secretKey: config.secretKey, limits: { dataApi: 0, publicIp: 6000, pixelKey: 0, failedKeys: 0, portal: 0 } });
    const requests = 200_000;
    const [own0, redis0, t0] = [process.cpuUsage(), await redisCpuUs(redis), performance.now()];
    for (let i = 0; i < requests; i += 50) await Promise.all(Array.from({ length: 50 }, () => limiter.consume('public_ip', nextClientAddress())));
    await new Promise((r) => setTimeout(r, 300)); // the last counts reach Redis
    const own = process.cpuUsage(own0);
    const [redis1, t1] = [await redisCpuUs(redis), performance.now()];
    const processUs = (own.user + own.system) / requests;
    const redisUs = (redis1 - redis0) / requests;
    return {
      limiter_cpu_per_request_us: round(processUs + redisUs, 1),
      process_cpu_per_request_us: round(processUs, 1),
      redis_cpu_per_request_us: round(redisUs, 1),
      requests_rps: round(requests / ((t1 - t0) / 1000), 0),
    };
  } finally {
    redis.disconnect();
  }
}
