import { AggregatorRegistry, Counter, collectDefaultMetrics, Gauge, Histogram, type MetricObjectWithValues, type MetricValue, Registry } from 'prom-client';

/**
 * The process's Prometheus registry, shared by the HTTP layer and the workers.
 * One registry per process: metrics are module singletons, created on first import.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });
// prom-client's totals of active handles, requests and resources are gauges named `_total`, which
// Prometheus keeps for counters (`promtool check metrics` fails them): the same figures stay as
// `sum(nodejs_active_handles)` etc., the per-type gauges beside them (docs/operations.md).
for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
  registry.removeSingleMetric(name);
}

/** The `route` label of a request a link domain served as a visit (docs/operations.md): not a 404, whatever its path. */
export const LINK_HOST_ROUTE = 'link_host';
const routeOverrides = new WeakMap<object, string>();

/** Counts `req` under `route` in the request metrics, whatever API route (or none) its path matched. */
export function countAsRoute(req: object, route: string): void {
  routeOverrides.set(req, route);
}

/** The `route` label of `req`: its override, else the route Fastify matched, else `unmatched` (a 404). */
export function routeLabel(req: object, routed: string | undefined): string {
  return routeOverrides.get(req) ?? routed ?? 'unmatched';
}

export const httpDuration = new Histogram({
  name: 'svc_http_request_duration_seconds',
  help: 'HTTP request latency by route and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

export const ingestionLag = new Histogram({
  name: 'svc_ingestion_lag_seconds',
  help: 'Time from acceptance of a fact to ClickHouse acknowledging its insert',
  labelNames: ['kind'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
  registers: [registry],
});

export const factsWritten = new Counter({
  name: 'svc_facts_written_total',
  help: 'Fact rows inserted into ClickHouse',
  labelNames: ['kind'] as const,
  registers: [registry],
});

export const batchFailures = new Counter({
  name: 'svc_batch_failures_total',
  help: 'Batches whose ClickHouse insert failed (their jobs are retried): insert failures',
  labelNames: ['kind'] as const,
  registers: [registry],
});

/** Outbound webhooks (docs/webhooks.md): never labelled by brand or URL. */
export const webhookAttempts = new Counter({
  name: 'svc_webhook_attempts_total',
  help: 'Webhook delivery attempts by outcome: success, or the error (timeout, connection, dns, tls, blocked_address, redirect, http_status)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const webhookAttemptDuration = new Histogram({
  name: 'svc_webhook_attempt_duration_seconds',
  help: 'Duration of webhook delivery attempts, from the address check to the answer read',
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
  registers: [registry],
});

export const webhookDeliveryLag = new Histogram({
  name: 'svc_webhook_delivery_lag_seconds',
  help: 'Time from a fact being recorded to its webhook delivery first answered 2xx',
  buckets: [0.1, 0.25, 0.5, 1, 1.5, 2.5, 5, 10, 30, 60, 300, 3600],
  registers: [registry],
});

export const webhookEndpoints = new Gauge({
  name: 'svc_webhook_endpoints',
  help: 'Webhook endpoints by status (active, failing, disabled)',
  labelNames: ['status'] as const,
  registers: [registry],
});

export const queueDepth = new Gauge({
  name: 'svc_queue_jobs',
  help: 'Jobs per queue and state',
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
});

export const queueOldestWaiting = new Gauge({
  name: 'svc_queue_oldest_waiting_seconds',
  help: 'Age of the oldest job waiting to be taken, per queue (0: none); grows when no worker consumes',
  labelNames: ['queue'] as const,
  registers: [registry],
});

export const ingestionPendingAge = new Gauge({
  name: 'svc_ingestion_pending_seconds',
  help: 'Age of the oldest accepted fact not yet queryable in ClickHouse (queued, retrying, or waiting in the Postgres outbox), per kind: the accepted-to-queryable lag now',
  labelNames: ['kind'] as const,
  registers: [registry],
});

export const queueAddFailures = new Counter({
  name: 'svc_queue_add_failures_total',
  help: 'Rows whose add to a Redis queue failed (clicks are refused; installs and ledger rows wait in the outbox)',
  labelNames: ['kind'] as const,
  registers: [registry],
});

export const storeUp = new Gauge({
  name: 'svc_store_up',
  help: 'Whether the store answered its last health probe (1) or not (0)',
  labelNames: ['store'] as const,
  registers: [registry],
});

export const healthProbes = new Counter({
  name: 'svc_health_probes_total',
  help: 'Store and queue probes run for /healthz and /metrics (shared by both, at most one a second)',
  registers: [registry],
});

type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[];
let workerThreadMetrics: MetricsSnapshot | undefined;

/** The latest counters of the workers' thread (workers/thread.ts), which has a registry of its own. */
export function setWorkerThreadMetrics(metrics: MetricsSnapshot): void {
  workerThreadMetrics = metrics;
}

/** The /metrics exposition: this thread's registry, plus the workers' thread's counters summed in. */
export async function metricsText(): Promise<string> {
  if (!workerThreadMetrics) return registry.metrics();
  return AggregatorRegistry.aggregate([await registry.getMetricsAsJSON(), workerThreadMetrics]).metrics();
}
