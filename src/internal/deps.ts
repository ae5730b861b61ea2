import type { DomainDeps } from '../attribution/domains/domains';
import type { WebhookServices } from '../attribution/outbound-webhooks/service';
import type { Queues } from '../facts';
import type { Warehouse } from '../warehouse/clickhouse';

/** What the operators' API uses: the stores, the fact queues (placements) and the domain functions' needs. */
export type InternalDeps = DomainDeps & {
  warehouse: Warehouse;
  queues: Queues;
  adminJwtSecret: string;
  /** Seals connection secrets. */
  secretKey: string;
  /** Outbound webhooks: the operators' endpoint list and switch. */
  webhooks: WebhookServices;
};
