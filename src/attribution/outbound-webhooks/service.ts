import type { Redis } from 'ioredis';
import type { Config } from '../../config';
import type { Db } from '../../db/database';
import { WebhookDeliveries } from './deliveries';
import { WebhookEndpoints } from './endpoints';
import { DeliveryQueue } from './queue';

/** What the portal and internal routes use of outbound webhooks: endpoints, their deliveries, the queue. */
export type WebhookServices = { endpoints: WebhookEndpoints; deliveries: WebhookDeliveries; queue: DeliveryQueue };

export function createWebhookServices(db: Db, redis: Redis, config: Config): WebhookServices {
  const queue = new DeliveryQueue(redis, config.queuePrefix);
  const w = config.webhooks;
  const endpoints = new WebhookEndpoints(db, config.secretKey, {
    maxEndpoints: w.maxEndpoints,
    rules: { requireHttps: w.requireHttps, allowedNetworks: w.allowedNetworks, publicBaseUrl: config.publicBaseUrl, dnsServers: config.dnsServers },
  });
  return { endpoints, deliveries: new WebhookDeliveries(db, queue), queue };
}
