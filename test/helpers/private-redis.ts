import { type ChildProcess, spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './free-port';
import { eventually } from './harness';


/**
 * A Redis server of the test's own on a free port, without persistence, that the test may
 * stop (SIGSTOP: hung), kill (SIGKILL: gone) and start again on the same port. Never the
 * machine's shared Redis.
 */
export class PrivateRedis {
  private server: ChildProcess | undefined;

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
    this.server = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
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

  /** SIGKILL: connections are refused until `restart`. */
  async kill(): Promise<void> {
    const server = this.server;
    if (!server || server.exitCode !== null || server.signalCode !== null) return;
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGKILL');
    await exited;
    this.server = undefined;
  }
}
