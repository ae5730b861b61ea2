import type { ChangeFeed } from '../../db/change-feed';
import type { Db } from '../../db/database';
import type { Logger } from '../../logger';
import { clickedDomain } from '../links/resolve';

/** While the change feed is down, the host list is read again at most this often. */
const STALE_MS = 5_000;

/**
 * Which `Host` headers name an attribution domain (docs/link-host.md): a domain the operator
 * registered or a verified portal domain, answered from memory: the hostnames
 * read once per `link_changes` generation, and every STALE_MS while the feed is down. When Postgres
 * cannot be read the last list serves; with none, no host is known to be one (`unreadable`).
 */
export class AttributionHosts {
  private hosts: Set<string> | undefined;
  private generation = -1;
  private readAt = 0;
  private failed = false;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly changes: ChangeFeed,
    private readonly log: Logger,
    /** The service's own host (serviceHostname): its API, whatever the domains table says. */
    private readonly serviceHost: string | null,
  ) {}

  /** Whether no list of domains could be read yet (Postgres down since the start): no host is known either way. */
  get unreadable(): boolean {
    return this.hosts === undefined && this.failed;
  }

  /** The attribution domain `hostHeader` names (lower case, no port, no `www.`, ASCII), or null. */
  async match(hostHeader: string | undefined): Promise<string | null> {
    if (!hostHeader) return null;
    const host = clickedDomain(utf8Host(hostHeader));
    if (!host || host === this.serviceHost) return null;
    if (!this.fresh()) await this.read();
    return this.hosts?.has(host) ? host : null;
  }

  private fresh(): boolean {
    if (this.changes.live && this.generation === this.changes.generation) return true;
    // A change heard is read at once, unless the last read failed: then, like without the feed, every STALE_MS.
    return Date.now() - this.readAt < (this.changes.live && !this.failed ? 0 : STALE_MS);
  }

  private read(): Promise<void> {
    this.reading ??= (async () => {
      const generation = this.changes.generation;
      try {
        // Served domains only: a brand's portal claim is an unknown host until it is verified.
        const rows = await this.db
          .selectFrom('domains')
          .select('hostname')
          .where((eb) => eb.or([eb('registered_by', '=', 'operator'), eb('verification_status', '=', 'verified')]))
          .execute();
        this.hosts = new Set(rows.map((r) => r.hostname));
        this.generation = generation;
        this.failed = false;
      } catch (err) {
        this.failed = true;
        this.log.warn({ err }, 'could not read the attribution domains; the last list serves');
      } finally {
        this.readAt = Date.now();
        this.reading = undefined;
      }
    })();
    return this.reading;
  }
}

/** Node reads header bytes as latin1: a Unicode host sent as raw UTF-8 is decoded back (punycode passes as is). */
function utf8Host(header: string): string {
  if (!/[^ -~]/.test(header)) return header;
  const decoded = Buffer.from(header, 'latin1').toString('utf8');
  return decoded.includes('\uFFFD') ? header : decoded;
}
