import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from '../logger';

const MARKER = 'caught-up ';

/**
 * A Postgres LISTEN channel as a generation counter for caches (migrations/0006, 0011); while it is
 * down `live` is false and caches read through. `onPayload` takes notifications instead of the counter.
 */
export class ChangeFeed {
  private generationValue = 0;
  private client: pg.Client | undefined;
  private connected = false;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  /** Markers sent by caughtUp(), resolved when they come back. */
  private readonly markers = new Map<string, () => void>();

  constructor(
    private readonly databaseUrl: string,
    private readonly channel: string,
    private readonly log: Logger,
    private readonly onPayload?: (payload: string) => void,
  ) {}

  get generation(): number {
    return this.generationValue;
  }

  get live(): boolean {
    return this.connected;
  }

  /** Something changed, here or elsewhere: caches keyed to the old generation are stale. */
  changed(): void {
    this.generationValue++;
  }

  /** Opens the listening connection; resolves once it listens (or failed, and will retry). */
  async start(): Promise<void> {
    this.closed = false;
    // Named, so an operator sees it in pg_stat_activity.
    const client = new pg.Client({ connectionString: this.databaseUrl, application_name: `svc-change-feed:${this.channel}`, keepAlive: true, query_timeout: 5000 });
    this.client = client;
    const lost = (err?: Error) => {
      if (this.client !== client) return;
      this.client = undefined;
      this.connected = false;
      clearInterval(this.heartbeat);
      this.changed();
      this.releaseMarkers();
      client.removeAllListeners();
      client.on('error', () => {});
      client.end().catch(() => {});
      if (this.closed) return;
      if (err) this.log.warn({ err, channel: this.channel }, 'change feed lost its Postgres connection; caches read through until it is back');
      this.retry = setTimeout(() => void this.start(), 1000);
      this.retry.unref();
    };
    client.on('notification', (n) => this.received(n.payload ?? ''));
    client.on('error', lost);
    client.on('end', () => lost());
    try {
      await client.connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(this.channel)}`);
      if (this.client !== client) return;
      this.changed(); // whatever happened before we listened is unknown
      this.connected = true;
      this.heartbeat = setInterval(() => {
        client.query('SELECT 1').catch((err: Error) => lost(err));
      }, 10_000);
      this.heartbeat.unref();
    } catch (err) {
      lost(err as Error);
    }
  }

  /**
   * Resolves once every notification committed before this call has been taken: Postgres delivers
   * them in commit order, so our own marker comes back after them (tests read after a write settles).
   */
  async caughtUp(): Promise<void> {
    const client = this.client;
    if (!client || !this.connected) return;
    const marker = `${MARKER}${randomUUID()}`;
    const back = new Promise<void>((resolve) => this.markers.set(marker, resolve));
    try {
      await client.query('SELECT pg_notify($1, $2)', [this.channel, marker]);
    } catch (err) {
      this.markers.delete(marker);
      // The connection dropped: caches read through until it is back, so nothing is behind.
      if (this.client === client && this.connected) throw err;
      return;
    }
    await back;
  }

  private received(payload: string): void {
    if (payload.startsWith(MARKER)) {
      this.markers.get(payload)?.();
      this.markers.delete(payload);
    } else if (this.onPayload) this.onPayload(payload);
    else this.changed();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    clearInterval(this.heartbeat);
    const client = this.client;
    this.client = undefined;
    this.connected = false;
    this.releaseMarkers();
    await client?.end().catch(() => {});
  }

  /** Without a connection every cache reads through, so whoever waits is caught up. */
  private releaseMarkers(): void {
    for (const resolve of this.markers.values()) resolve();
    this.markers.clear();
  }
}
