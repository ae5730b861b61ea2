import { execSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createWarehouse } from '../src/warehouse/clickhouse';
import { freePort } from './helpers/free-port';
import { eventually } from './helpers/harness';
import { promtoolCheckMetrics, promtoolPresent, promtoolRequired } from './helpers/promtool';
import { exited, SERVICE_COMMAND, serviceProcessEnv, startServiceProcess } from './helpers/service-process';

/**
 * The real process, as `npm start` runs it: stopped with SIGTERM while placements are
 * still queued, then started again; every placement must reach ClickHouse.
 */
const { env, admin, remove } = serviceProcessEnv('main');

const SERVICE = SERVICE_COMMAND;

/** Starts the service (or `command`, which starts it) and waits for its listen line; `watch` sees its output so far. */
const start = (command = SERVICE, spawnEnv: NodeJS.ProcessEnv = env, watch?: (out: string) => void) => startServiceProcess(command, spawnEnv, watch);

/**
 * Starts the service while something it needs is held elsewhere: it must log `warning` and wait
 * (an exit rejects `starting`), then, once `release` frees what it waits for, listen, answer
 * /healthz and stop cleanly. Answers the base URL it listened on.
 */
async function startsOnceReleased(spawnEnv: NodeJS.ProcessEnv, warning: string, release: () => unknown): Promise<string> {
  let warned = false;
  let seen!: () => void;
  const waiting = new Promise<void>((resolve) => {
    seen = resolve;
  });
  const starting = start(SERVICE, spawnEnv, (out) => {
    warned ||= out.includes(warning);
    if (warned) seen();
  });
  await Promise.race([waiting, starting]);
  expect(warned).toBe(true);
  await release();
  const { child, base } = await starting;
  expect((await fetch(`${base}/healthz`)).status).toBe(200);
  child.kill('SIGTERM');
  expect(await exited(child)).toBe(0);
  return base;
}

afterAll(remove);

describe('npm start', () => {
  it('answers /healthz, and a SIGTERM with placements queued loses none of them', async () => {
    const first = await start();
    const health = await fetch(`${first.base}/healthz`);
    expect(health.status).toBe(200);

    const post = (path: string, body: unknown) =>
      fetch(`${first.base}${path}`, { method: 'POST', headers: admin, body: JSON.stringify(body) }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { id: string },
      }));
    const brand = await post('/api/internal/brands', { name: 'Sigterm' });
    const campaign = await post('/api/internal/campaigns', { brand_id: brand.body.id, name: 'C' });
    const n = 6000;
    const accepted = [];
    for (let batch = 0; batch < 3; batch++) {
      const placements = Array.from({ length: n / 3 }, (_, i) => ({
        id: `sig-${batch}-${i}`,
        brand_id: brand.body.id,
        campaign_id: campaign.body.id,
        creator_id: null,
        platform: 'facebook',
        posted_at: '2026-02-01T00:00:00Z',
      }));
      accepted.push(post('/api/internal/placements', { placements }));
    }
    expect((await Promise.all(accepted)).map((r) => r.status)).toEqual([202, 202, 202]);
    first.child.kill('SIGTERM');
    expect(await exited(first.child)).toBe(0);

    // Restart; wait until the queue is empty, stop again, then count in ClickHouse.
    const second = await start();
    const redis = new Redis(env.REDIS_URL, { maxRetriesPerRequest: null });
    const queue = new Queue('placements', { connection: redis, prefix: env.QUEUE_PREFIX });
    await eventually(
      () => queue.getJobCounts('waiting', 'active', 'delayed'),
      (c) => (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) === 0,
      30_000,
    );
    await queue.close();
    await redis.quit();

    // The consumers run in their own thread; /metrics still counts what they wrote.
    const more = Array.from({ length: 10 }, (_, i) => ({
      id: `metrics-${i}`,
      brand_id: brand.body.id,
      campaign_id: campaign.body.id,
      creator_id: null,
      platform: 'facebook',
      posted_at: '2026-02-01T00:00:00Z',
    }));
    const added = await fetch(`${second.base}/api/internal/placements`, { method: 'POST', headers: admin, body: JSON.stringify({ placements: more }) });
    expect(added.status).toBe(202);
    const written = async () => {
      const text = await (await fetch(`${second.base}/metrics`)).text();
      return Number(/^svc_facts_written_total\{kind="placements"\} (\d+)/m.exec(text)?.[1] ?? 0);
    };
    await eventually(written, (count) => count >= 10, 15_000);
    // The exposition with the workers' thread summed in passes Prometheus' own check.
    if (promtoolPresent || promtoolRequired) {
      const { status, output } = promtoolCheckMetrics(await (await fetch(`${second.base}/metrics`)).text());
      expect(output).toBe('');
      expect(status).toBe(0);
    }
    second.child.kill('SIGTERM');
    expect(await exited(second.child)).toBe(0);

    const wh = await createWarehouse({ database: env.CLICKHOUSE_DATABASE, dataDir: env.DATA_DIR });
    const [row] = await wh.rows<{ n: number; distinct_ids: number }>(
      'SELECT count() AS n, uniqExact(placement_id) AS distinct_ids FROM placements WHERE brand_id = {b:String}',
      { b: brand.body.id },
    );
    await wh.close();
    expect(row).toEqual({ n: n + 10, distinct_ids: n + 10 });
  }, 150_000);
});

describe('a service given a Redis database its server does not have', () => {
  it('stops at once with one line naming REDIS_URL, instead of running in database 0', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-redis99-'));
    const redisUrl = new URL(env.REDIS_URL);
    redisUrl.pathname = '/99';
    const prefix = `svcr99_${Date.now()}`;
    const spawnEnv = { ...env, DATA_DIR: dataDir, REDIS_URL: redisUrl.toString(), QUEUE_PREFIX: prefix };
    const child = spawn(SERVICE[0]!, SERVICE.slice(1), { env: spawnEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    expect(await exited(child)).toBe(1);
    expect(stderr.trim()).toBe('Invalid configuration: REDIS_URL names database 99, which this Redis server does not have (its "databases" setting)');
    // Asked before any other connection opened: nothing of this service landed in the tests' database.
    redisUrl.pathname = new URL(env.REDIS_URL).pathname;
    const redis = new Redis(redisUrl.toString());
    expect(await redis.keys(`${prefix}:*`)).toEqual([]);
    await redis.quit();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);
});

describe('signals', () => {
  it("a second signal (Ctrl-C twice, a supervisor's SIGTERM after it) ends the process at once, with every log line written", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-signals-'));
    let out = '';
    const { child } = await start(SERVICE, { ...env, DATA_DIR: dataDir, LOG_LEVEL: 'info' }, (o) => {
      out = o;
    });
    // Two signals at once (two different ones, which the kernel never merges into one).
    child.kill('SIGINT');
    child.kill('SIGTERM');
    // Ended by its own exit (1) in the middle of the first stop, not by the signal: pino wrote what it held first.
    expect(await exited(child)).toBe(1);
    expect(out).toContain('"msg":"shutting down"');
    rmSync(dataDir, { recursive: true, force: true });
  }, 90_000);
});

describe('a service whose parent is gone', () => {
  it('shuts down rather than live on holding its port and data directory', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-orphan-'));
    // `; true` keeps sh as the service's parent (no exec): a wrapper that dies without passing a signal on.
    const wrapper = await start(['sh', '-c', `${SERVICE.join(' ')}; true`], { ...env, DATA_DIR: dataDir });
    const service = Number(execSync(`pgrep -P ${wrapper.child.pid}`).toString().trim());
    expect(service).toBeGreaterThan(0);
    const alive = () => {
      try {
        process.kill(service, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(alive()).toBe(true);
    wrapper.child.kill('SIGKILL');
    await eventually(async () => alive(), (running) => !running, 30_000);
    rmSync(dataDir, { recursive: true, force: true });
  }, 90_000);
});

describe('a service started while its predecessor still holds the data directory', () => {
  it('waits for the directory to be released, then serves', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-overlap-'));
    const holder = spawn(process.execPath, ['test/hold-clickhouse-dir.mjs', join(dataDir, 'clickhouse')], { stdio: ['pipe', 'pipe', 'ignore'] });
    await new Promise<void>((resolve) => holder.stdout!.on('data', (d: Buffer) => d.toString().includes('held') && resolve()));

    try {
      await startsOnceReleased({ ...env, DATA_DIR: dataDir }, 'embedded ClickHouse is held by another process', () => holder.stdin!.end());
    } finally {
      holder.kill();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});

describe('a service started while its predecessor still holds the port', () => {
  it('waits for the port to be released, then serves', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as { port: number }).port;
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-port-'));
    try {
      const base = await startsOnceReleased({ ...env, DATA_DIR: dataDir, PORT: String(port) }, 'port in use', () => new Promise((r) => holder.close(r)));
      expect(base).toBe(`http://127.0.0.1:${port}`);
    } finally {
      holder.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});

describe('npm start on an empty database, with the demo', () => {
  const demo = serviceProcessEnv('maindemo', { DEMO: '1', LOG_LEVEL: 'info' });
  afterAll(demo.remove);

  /** GET `link` from the service at 127.0.0.1 (the name under localhost is this machine), as a phone. */
  const visit = (link: string) =>
    new Promise<{ status: number; location?: string; body: string }>((resolve, reject) => {
      const url = new URL(link);
      const req = httpRequest(
        { host: '127.0.0.1', port: url.port, path: url.pathname, headers: { host: url.host, 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X)' } },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => {
            body += d.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location, body }));
        },
      );
      req.on('error', reject).end();
    });

  it('seeds quietly and ends with the banner: URL, portal login, keys, API docs and both creator links, which open', async () => {
    let out = '';
    // As a newcomer runs it: PUBLIC_BASE_URL unset, so the service's own address on its port.
    const env: NodeJS.ProcessEnv = { ...demo.env, PORT: String(await freePort()) };
    delete env.PUBLIC_BASE_URL;
    const { child, base } = await start(SERVICE, env, (o) => {
      out = o;
    });
    try {
      await eventually(async () => out, (o) => /app link: .*\n/.test(o), 240_000);
      // The seeding's hundreds of internal requests wrote no request line.
      expect(out).not.toContain('request completed');
      const banner = out.slice(out.indexOf('svc is running at'));
      const publicBase = base;
      expect(banner.startsWith(`svc is running at ${publicBase}\n`)).toBe(true);
      for (const line of [`Portal:       ${publicBase}/portal/`, 'log in as demo-', 'API key:      sk_', 'Pixel key:    pk_', `API docs:     ${publicBase}/docs/api`]) {
        expect(banner).toContain(line);
      }
      // Nothing after it: the banner is the last thing a newcomer reads.
      expect(out.trimEnd().endsWith('(the smart install page)')).toBe(true);

      const port = new URL(base).port;
      const web = /web link: +(http:\/\/go-[0-9a-f]{8}\.localhost:(\d+)\/\S+)/.exec(banner)!;
      const app = /app link: +(http:\/\/go-[0-9a-f]{8}\.localhost:(\d+)\/\S+)/.exec(banner)!;
      expect([web[2], app[2]]).toEqual([port, port]);
      const redirect = await visit(web[1]!);
      expect(redirect.status).toBe(302);
      expect(redirect.location).toMatch(/svc_cid=svc_/);
      const page = await visit(app[1]!);
      expect(page.status).toBe(200);
      expect(page.body).toMatch(/<main data-click-token="svc_/);
      // Its logo comes from this service, never from another host.
      expect(page.body).toContain(`src="${publicBase}/demo/images/logo.svg?`);
    } finally {
      child.kill('SIGTERM');
      await exited(child);
    }
  }, 300_000);
});
