import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Config } from '../src/config';
import { signAdminToken } from '../src/http/admin-auth';
import { freePort } from '../test/helpers/free-port';
import { START_NODE_FLAGS } from '../test/helpers/start-flags';
import { percentile, round } from './helpers';

/**
 * The service as `npm start` runs it, in a process of its own, for benches that load it from
 * outside (at the default log level, `info`, unless BENCH_LOG_LEVEL says otherwise), and the
 * CPU a load costs: the whole machine's busy time less the load generator's own.
 */

export type ServiceProcess = { base: string; child: ChildProcess; stop(): Promise<void> };

/**
 * A Node process running `script` (through tsx) on a free port of 127.0.0.1, resolved once its
 * /healthz answers 200; stopped again, and the error thrown, when it exits or stays silent for 60 s.
 */
export async function startProcess(script: string[], env: Record<string, string>, flags: string[] = []): Promise<ServiceProcess> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // Node options for the processes a bench starts, for trials: `BENCH_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof"`.
  const nodeFlags = [...flags, ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [])];
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', ...script], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    await ready(base, child);
  } catch (err) {
    await stop();
    throw err;
  }
  return { base, child, stop };
}

/** Starts `src/main.ts all` with `npm start`'s Node flags on the bench environment's stores; resolves once /healthz answers. */
export function startServiceProcess(config: Config, env: Record<string, string> = {}): Promise<ServiceProcess> {
  return startProcess(['src/main.ts', 'all'], {
    NODE_ENV: 'development',
    DATABASE_URL: config.databaseUrl,
    CLICKHOUSE_DATABASE: config.clickhouseDatabase,
    DATA_DIR: config.dataDir,
    QUEUE_PREFIX: config.queuePrefix,
    ADMIN_JWT_SECRET: config.adminJwtSecret,
    SECRET_KEY: config.secretKey,
    PUBLIC_BASE_URL: config.publicBaseUrl,
    DEMO: '0',
    LOG_LEVEL: config.logLevel,
    ...env,
  }, START_NODE_FLAGS);
}

async function ready(base: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${child.spawnargs.at(-1)} exited with ${child.exitCode} before answering /healthz`);
    const ok = await fetch(`${base}/healthz`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${child.spawnargs.at(-1)} did not answer /healthz within 60 s`);
}

/** POSTs JSON to a running service and answers the parsed body; a refusal throws. */
export async function postJson(base: string, path: string, body: object, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
}

/** postJson with an admin JWT, for the internal endpoints. */
export function adminPostJson(base: string, adminJwtSecret: string) {
  const authorization = `Bearer ${signAdminToken(adminJwtSecret)}`;
  return (path: string, body: object) => postJson(base, path, body, { authorization });
}

/** Busy jiffies of the whole machine (first line of /proc/stat). */
function machineJiffies(): number {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq, steal] = fields.map(Number) as number[];
  return user! + nice! + system! + irq! + softirq! + steal!;
}

/** CPU jiffies (user + system) of `/proc/<path>/stat`: a process (all its threads) or one thread (`pid/task/tid`). */
function jiffies(path: string | number): number {
  const stat = readFileSync(`/proc/${path}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** The jiffies of every running process named `postgres` or `redis-server` (the stores, with all their backends), by pid. */
function storeJiffies(): Map<number, { store: 'postgres' | 'redis'; jiffies: number }> {
  const found = new Map<number, { store: 'postgres' | 'redis'; jiffies: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const comm = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
      const store = comm === 'postgres' ? 'postgres' : comm === 'redis-server' ? 'redis' : undefined;
      if (store) found.set(Number(entry), { store, jiffies: jiffies(entry) });
    } catch {
      // The process ended while the list was read.
    }
  }
  return found;
}

/** Each store's CPU between two readings; a backend started in between counts whole, one that ended is missed. */
function storeUs(before: ReturnType<typeof storeJiffies>, after: ReturnType<typeof storeJiffies>) {
  const us = { postgres: 0, redis: 0 };
  for (const [pid, { store, jiffies: end }] of after) us[store] += (end - (before.get(pid)?.jiffies ?? 0)) * JIFFY_US;
  return us;
}

const JIFFY_US = 1e6 / 100; // USER_HZ
const ownCpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/**
 * A load's answered requests, latency and the CPU it cost, including what the service did in the
 * tail after it: the machine's, the service process's, its HTTP thread's (the main thread) and the stores'.
 */
export type CpuSlice = {
  answered: number;
  machineUs: number;
  serviceUs: number;
  httpThreadUs: number;
  postgresUs: number;
  redisUs: number;
  rps: number;
  p50: number;
  p99: number;
};

/** A load answering `{answered, duration (s), p50, p99 (ms)}`: its CPU is counted until `tailMs` after it ends. */
export async function cpuSlice(
  service: ChildProcess,
  load: () => Promise<{ answered: number; duration: number; p50: number; p99: number }>,
  tailMs = 1500,
): Promise<CpuSlice> {
  const pid = service.pid!;
  const read = () => ({ machine: machineJiffies(), service: jiffies(pid), http: jiffies(`${pid}/task/${pid}`), stores: storeJiffies(), own: ownCpuUs() });
  const before = read();
  const r = await load();
  await new Promise((resolve) => setTimeout(resolve, tailMs));
  const after = read();
  const stores = storeUs(before.stores, after.stores);
  return {
    answered: r.answered,
    machineUs: (after.machine - before.machine) * JIFFY_US - (after.own - before.own),
    serviceUs: (after.service - before.service) * JIFFY_US,
    httpThreadUs: (after.http - before.http) * JIFFY_US,
    postgresUs: stores.postgres,
    redisUs: stores.redis,
    rps: r.answered / r.duration,
    p50: r.p50,
    p99: r.p99,
  };
}

/** CPU per answered request over slices (the machine, the service process and its parts), throughput and latency. */
export function cpuFigures(slices: CpuSlice[]) {
  const sum = (pick: (s: CpuSlice) => number) => slices.reduce((n, s) => n + pick(s), 0);
  const answered = sum((s) => s.answered);
  return {
    cpu_per_request_us: round(sum((s) => s.machineUs) / answered, 0),
    service_cpu_per_request_us: round(sum((s) => s.serviceUs) / answered, 0),
    // Where it went: the service's HTTP thread (the rest of the service is its workers', V8's and ClickHouse's threads) and the stores.
    http_thread_cpu_per_request_us: round(sum((s) => s.httpThreadUs) / answered, 0),
    postgres_cpu_per_request_us: round(sum((s) => s.postgresUs) / answered, 0),
    redis_cpu_per_request_us: round(sum((s) => s.redisUs) / answered, 0),
    requests_rps: round(sum((s) => s.rps) / slices.length, 0),
    p50_ms: percentile(slices.map((s) => s.p50), 50),
    p99_ms: Math.max(...slices.map((s) => s.p99)),
  };
}
