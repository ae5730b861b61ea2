import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { signAdminToken } from '../src/http/admin-auth';
import { benchEnvironment } from './environment';
import { percentile, round, seedWebLink } from './helpers';
import type { Bench } from './run';

/**
 * The link host's CPU per visit against POST /clicks (at most 1.2 times, issue 18), the machine's
 * and the service process's, on the service as `npm start` runs it, the two loads alternating in
 * rounds. Method and results: docs/link-host.md ("Cost").
 */
export const names = ['link-host'];

const ROUNDS = 3;
const SLICE_S = 4;
const WARMUP_S = 2;
const TAIL_MS = 1500;
const CONNECTIONS = 50;
const TARGET_RATIO = 1.2;
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148';

type LoadResult = { '2xx': number; '3xx': number; non2xx: number; errors: number; duration: number; latency: { p50: number; p99: number } };
type LoadOptions = { url: string; method: 'GET' | 'POST'; headers: Record<string, string>; body?: string; connections: number; duration: number; workers: number };
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: LoadOptions) => Promise<LoadResult>;

/** Busy and total jiffies of the whole machine (first line of /proc/stat). */
function machineJiffies(): number {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq, steal] = fields.map(Number) as number[];
  return user! + nice! + system! + irq! + softirq! + steal!;
}

/** CPU jiffies (user + system, all threads) of process `pid`. */
function processJiffies(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

const JIFFY_US = 1e6 / 100; // USER_HZ
const ownCpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

type Slice = { answered: number; machineUs: number; serviceUs: number; rps: number; p50: number; p99: number };

async function slice(service: ChildProcess, opts: Omit<LoadOptions, 'connections' | 'duration' | 'workers'>, seconds: number): Promise<Slice> {
  const [machine0, service0, own0] = [machineJiffies(), processJiffies(service.pid!), ownCpuUs()];
  const r = await autocannon({ ...opts, connections: CONNECTIONS, duration: seconds, workers: 1 });
  await new Promise((resolve) => setTimeout(resolve, TAIL_MS));
  const [machine1, service1, own1] = [machineJiffies(), processJiffies(service.pid!), ownCpuUs()];
  const answered = r['2xx'] + r['3xx'];
  if (answered === 0 || r.errors > 0 || r.non2xx > r['3xx']) throw new Error(`${opts.method} ${opts.url}: ${JSON.stringify(r)}`);
  return {
    answered,
    machineUs: (machine1 - machine0) * JIFFY_US - (own1 - own0),
    serviceUs: (service1 - service0) * JIFFY_US,
    rps: answered / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
  };
}

function figures(slices: Slice[]) {
  const sum = (pick: (s: Slice) => number) => slices.reduce((n, s) => n + pick(s), 0);
  const answered = sum((s) => s.answered);
  return {
    cpu_per_request_us: round(sum((s) => s.machineUs) / answered, 0),
    service_cpu_per_request_us: round(sum((s) => s.serviceUs) / answered, 0),
    requests_rps: round(sum((s) => s.rps) / slices.length, 0),
    p50_ms: percentile(slices.map((s) => s.p50), 50),
    p99_ms: Math.max(...slices.map((s) => s.p99)),
  };
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

const bench: Bench = async (emit) => {
  const env = benchEnvironment('linkhost');
  const { config } = env;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // As `npm start` runs: default log level, one process; one load generator on one address, so the per-IP limit is off.
  const service = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'all'], {
    env: {
      ...process.env,
      NODE_ENV: 'development',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: config.databaseUrl,
      CLICKHOUSE_DATABASE: config.clickhouseDatabase,
      DATA_DIR: config.dataDir,
      QUEUE_PREFIX: config.queuePrefix,
      ADMIN_JWT_SECRET: config.adminJwtSecret,
      SECRET_KEY: config.secretKey,
      DEMO: '0',
      LOG_LEVEL: 'info',
      RATE_LIMIT_PUBLIC_IP: '0',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await ready(base);
    const hostname = await setUpLinks(base, config.adminJwtSecret);
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
    const measured = { post: [] as Slice[], get: [] as Slice[] };
    for (let i = 0; i < ROUNDS; i++) {
      measured.post.push(await slice(service, loads.post, SLICE_S));
      measured.get.push(await slice(service, loads.get, SLICE_S));
    }
    const get = figures(measured.get);
    const post = figures(measured.post);
    emit({
      name: 'link-host',
      ...get,
      baseline: post,
      ratio: round(get.cpu_per_request_us / post.cpu_per_request_us),
      service_ratio: round(get.service_cpu_per_request_us / post.service_cpu_per_request_us),
      target_ratio: TARGET_RATIO,
    });
  } finally {
    const exited = new Promise((resolve) => service.once('exit', resolve));
    service.kill('SIGTERM');
    await exited;
    await env.remove();
  }
};
export default bench;

async function ready(base: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const ok = await fetch(`${base}/healthz`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the service did not answer /healthz within 60 s');
}

/** A brand with a vanity domain and a web link `maya`, made through the internal endpoints; answers the domain. */
async function setUpLinks(base: string, adminSecret: string): Promise<string> {
  const headers = { authorization: `Bearer ${signAdminToken(adminSecret)}`, 'content-type': 'application/json' };
  const post = async (path: string, body: object) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: string };
  };
  return (await seedWebLink(post)).hostname;
}
