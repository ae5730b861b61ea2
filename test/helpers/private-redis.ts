import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port';
import { eventually } from './harness';

/**
 * A Redis server of the test's own on a free port, in a temporary directory, that the test may
 * reconfigure, stop (SIGSTOP: hung), kill (SIGKILL: gone) and start again on the same port.
 * Never the machine's shared Redis.
 */
export class PrivateRedis {
  private server: ChildProcess | undefined;
  private dir: string | undefined;

  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort());
    await r.restart();
    return r;
  }

  /** Starts the server (again) and waits until it answers. */
  async restart(): Promise<void> {
    // Its own directory: a test that turns appendonly on writes the file there, not in the checkout.
    this.dir ??= mkdtempSync(join(tmpdir(), 'svc-redis-'));
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--appendonly', 'no'];
    this.server = spawn('redis-server', args, { stdio: 'ignore' });
    const probe = new Redis(this.url, { lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: 0 });
    probe.on('error', () => {});
    try {
      await eventually(() => probe.ping().then(() => true, () => false), (ok) => ok, 10_000);
    } finally {
      probe.disconnect();
    }
  }

  /** SIGSTOP: the server keeps its connections open and answers nothing. */
  hang(): void {
    this.server?.kill('SIGSTOP');
  }

  resume(): void {
    this.server?.kill('SIGCONT');
  }

  /** SIGKILL (a SIGTERM may leave an append-only shutdown pending): connections are refused until `restart`. */
  async kill(): Promise<void> {
    const server = this.server;
    if (server && server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGKILL');
      await exited;
    }
    this.server = undefined;
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}
