import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy to a server of the machine (the shared Postgres) that a test can freeze: while
 * frozen it accepts connections and holds every byte in both directions, as a server that is
 * up but hung would; thawed, it delivers what it held, in order. Cut, it drops every connection
 * and closes new ones at once, as a server that is down would, until restored. The shared server
 * itself is never touched.
 */
export class FreezableProxy {
  private frozen = false;
  private down = false;
  private held: [Socket, Buffer][] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static start(target: { host: string; port: number }): Promise<FreezableProxy> {
    return new Promise((resolve, reject) => {
      let proxy: FreezableProxy;
      const server = createServer((client) => (proxy.down ? client.destroy() : proxy.pair(client, connect(target.port, target.host))));
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        proxy = new FreezableProxy(server, (server.address() as { port: number }).port);
        resolve(proxy);
      });
    });
  }

  private pair(client: Socket, upstream: Socket): void {
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.sockets.add(from);
      from.on('data', (data) => (this.frozen ? this.held.push([to, data]) : to.write(data)));
      from.on('close', () => {
        this.sockets.delete(from);
        to.destroy();
      });
      from.on('error', () => to.destroy());
    }
  }

  freeze(): void {
    this.frozen = true;
  }

  thaw(): void {
    this.frozen = false;
    for (const [to, data] of this.held) if (!to.destroyed) to.write(data);
    this.held = [];
  }

  cut(): void {
    this.down = true;
    for (const s of this.sockets) s.destroy();
  }

  restore(): void {
    this.down = false;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
