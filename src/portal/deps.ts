import type { Redis } from 'ioredis';
import type { DomainDeps } from '../attribution/domains/domains';
import type { WebhookServices } from '../attribution/outbound-webhooks/service';
import type { RateLimiter } from '../http/rate-limit';
import type { RecordChanges } from '../reads/changes';
import type { Reads } from '../reads/pipeline';
import type { Warehouse } from '../warehouse/clickhouse';

/** What the portal's routes use: its stores, the brand-facing URLs and the domain functions' needs. */
export type PortalDeps = DomainDeps & {
  warehouse: Warehouse;
  /** The read pipeline: answers kept per brand and question until what they depend on changes (src/reads/). */
  reads: Reads;
  /** Moves when portal sessions are revoked or deleted anywhere (sessions kept in memory: ./session.ts). */
  recordChanges: RecordChanges;
  /** Login attempts are counted here, under `loginLimitPrefix`. */
  redis: Redis;
  loginLimitPrefix: string;
  /** Seals connection secrets; keys the login limiter's hashes. */
  secretKey: string;
  /** Counts each session's requests (RATE_LIMIT_PORTAL). */
  rateLimiter: RateLimiter;
  /** Outbound webhooks: endpoints, deliveries (src/attribution/outbound-webhooks/). */
  webhooks: WebhookServices;
};
