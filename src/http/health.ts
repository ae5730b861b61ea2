import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../config';
import type { Db } from '../db/database';
import { outboxPendingSeconds } from '../queues/outbox/sweeper';
import { healthProbes, ingestionPendingAge, metricsText, registry, storeUp } from '../metrics';
import { unauthorized } from '../refusal';
import { bearerToken, safeEqual } from '../secrets';
import { FACT_KINDS, type FactKind } from '../queues/facts';
import type { QueueState } from '../queues/queues';
import type { Warehouse } from '../warehouse/clickhouse';
import { type Gate, mountRoutes, route } from './route';

/** What health reads: the three stores, the queues' state and the limits it reports against. */
export type HealthDeps = {
  db: Db;
  redis: Redis;
  warehouse: Warehouse;
  queues: { state(): Promise<Record<FactKind, QueueState>> };
  /** Queues beside the fact queues (outbound webhooks): listed as `queue_stalled:<name>` too. */
  otherQueues?: { name: string; state(): Promise<QueueState> }[];
  config: Pick<Config, 'timeouts' | 'degradedAfter' | 'metricsToken'>;
};

/** Settles with `p`, or rejects once `ms` have passed: a hung store fails its probe instead of holding it. */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

type Stores = { postgres: boolean; redis: boolean; clickhouse: boolean };

/** Probes the three stores at once, each given `healthProbeMs`, and sets the reachability gauges. */
async function probeStores(services: HealthDeps): Promise<Stores> {
  const ms = services.config.timeouts.healthProbeMs;
  const checks = await Promise.allSettled([
    within(services.db.selectNoFrom((eb) => eb.val(1).as('one')).execute(), ms),
    within(services.redis.ping(), ms),
    within(
      services.warehouse.ping().then((ok) => {
        if (!ok) throw new Error('clickhouse ping failed');
      }),
      ms,
    ),
  ]);
  const [postgres, redis, clickhouse] = checks.map((c) => c.status === 'fulfilled') as [boolean, boolean, boolean];
  const stores: Stores = { postgres, redis, clickhouse };
  for (const [store, up] of Object.entries(stores)) storeUp.set({ store }, up ? 1 : 0);
  return stores;
}

/**
 * What is degraded while the stores answer (docs/operations.md#what-an-operator-sees): `queue_stalled:<kind>` past
 * QUEUE_STALLED_SECONDS of an unconsumed job, `ingestion_lag` past INGESTION_LAG_DEGRADED_SECONDS of
 * an accepted fact not yet queryable. Sets the gauges of /metrics on the way.
 */
async function degradedParts(services: HealthDeps): Promise<string[]> {
  const others = services.otherQueues ?? [];
  const [queues, outbox, otherStates] = await Promise.all([services.queues.state(), outboxPendingSeconds(services.db), Promise.all(others.map((q) => q.state()))]);
  const { ingestionLagSeconds, queueStalledSeconds } = services.config.degradedAfter;
  const degraded: string[] = [];
  let lagging = false;
  for (const kind of FACT_KINDS) {
    const pending = Math.max(queues[kind].oldestOpenSeconds, outbox[kind as keyof typeof outbox] ?? 0);
    ingestionPendingAge.set({ kind }, pending);
    if (pending > ingestionLagSeconds) lagging = true;
    if (queues[kind].oldestWaitingSeconds > queueStalledSeconds) degraded.push(`queue_stalled:${kind satisfies FactKind}`);
  }
  others.forEach((q, i) => {
    if (otherStates[i]!.oldestWaitingSeconds > queueStalledSeconds) degraded.push(`queue_stalled:${q.name}`);
  });
  return lagging ? ['ingestion_lag', ...degraded] : degraded;
}

/** The stores' state, and what is degraded (null when Postgres or Redis is down, or the queues' state did not answer in time). */
type Probe = { stores: Stores; degraded: string[] | null };

/**
 * The store probes behind /healthz and /metrics, shared: a probe started less than `everyMs` ago
 * (finished or not) is the answer, so however often both are asked, the stores and queues are
 * probed at most once a second.
 */
export class HealthProbe {
  private last: { startedAt: number; result: Promise<Probe> } | undefined;

  constructor(
    private readonly services: HealthDeps,
    private readonly everyMs = 1000,
  ) {}

  read(): Promise<Probe> {
    const now = Date.now();
    if (this.last && now - this.last.startedAt < this.everyMs) return this.last.result;
    const result = this.run();
    this.last = { startedAt: now, result };
    return result;
  }

  private async run(): Promise<Probe> {
    healthProbes.inc();
    const stores = await probeStores(this.services);
    // Reading the queues' state is one more probe: when it does not answer in time, nothing is listed.
    const degraded = stores.postgres && stores.redis ? await within(degradedParts(this.services), this.services.config.timeouts.healthProbeMs).catch(() => null) : null;
    return { stores, degraded };
  }
}

/** The gate of auth 'metrics_token': without METRICS_TOKEN anyone, with it only its Bearer (else 401 unauthorized). */
function metricsTokenGate(token: string | undefined): Gate<'metrics_token'> {
  return {
    at: 'request',
    async resolve(req) {
      if (token !== undefined && !safeEqual(bearerToken(req.headers.authorization) ?? '', token)) throw unauthorized();
      return undefined;
    },
  };
}

/** GET /healthz and GET /metrics (docs/operations.md), on one shared probe. */
export async function healthRoutes(app: FastifyInstance, { deps: services }: { deps: HealthDeps }) {
  const probe = new HealthProbe(services);
  const routes = [
    route({
      method: 'GET',
      path: '/healthz',
      summary: 'Whether the stores answer, and what is degraded',
      responses: { 200: { description: '{ok: true, degraded?}' }, 503: { description: '{ok: false, postgres, redis, clickhouse}' } },
      async handler({ reply }) {
        const { stores, degraded } = await probe.read();
        if (!stores.postgres || !stores.redis || !stores.clickhouse) return reply.status(503).send({ ok: false, ...stores });
        return degraded?.length ? { ok: true, degraded } : { ok: true };
      },
    }),
    route({
      method: 'GET',
      path: '/metrics',
      auth: 'metrics_token',
      summary: 'Prometheus metrics',
      responses: { 200: { description: 'Prometheus text format' }, 401: { description: 'unauthorized' } },
      async handler({ reply }) {
        // Refreshes the gauges; a store that does not answer leaves its last values.
        await probe.read();
        reply.header('content-type', registry.contentType);
        return metricsText();
      },
    }),
  ];
  mountRoutes(app, routes, { gates: { metrics_token: metricsTokenGate(services.config.metricsToken) }, queryErrors: 'invalid_request' });
}
