import { randomUUID } from 'node:crypto';
import { type Selectable, sql } from 'kysely';
import type { Db } from '../../db/database';
import type { Logger } from '../../logger';
import { RepeatedLog } from '../../repeated-log';
import { eventBody, eventsOf, type FactKindOfEvent, type WebhookEvent } from './events';
import { type DeliveryQueue, JOB_DELIVERIES, type QueuedDelivery } from './queue';
import { type WebhookEndpointsTable, webhookDb } from './tables';

type Endpoint = Pick<Selectable<WebhookEndpointsTable>, 'id' | 'brand_id' | 'event_types' | 'attributed_only' | 'include_sandbox' | 'created_at'>;

/** Whether an endpoint takes an event: its types, its filters, and only events recorded since it was created. */
export function endpointTakes(endpoint: Endpoint, event: WebhookEvent): boolean {
  if (!endpoint.event_types.includes(event.type)) return false;
  if (event.recordedAt < new Date(endpoint.created_at)) return false;
  if (event.sandbox && !endpoint.include_sandbox) return false;
  if (endpoint.attributed_only && event.unattributed && event.supersedes === null) return false;
  return true;
}

export type NewDelivery = {
  id: string;
  endpoint_id: string;
  brand_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  fact_recorded_at: Date | string;
};

/**
 * Records new deliveries, each endpoint's in jobs of up to JOB_DELIVERIES (the job's id kept on
 * each), and answers those inserted: a delivery already made for its (endpoint, event) is skipped.
 */
export async function insertDeliveries(db: Db, deliveries: NewDelivery[]): Promise<QueuedDelivery[]> {
  const jobs = new Map<string, { id: string; size: number }>();
  const rows = deliveries.map((d) => {
    let job = jobs.get(d.endpoint_id);
    if (!job || job.size === JOB_DELIVERIES) {
      job = { id: randomUUID(), size: 0 };
      jobs.set(d.endpoint_id, job);
    }
    job.size++;
    return { ...d, job_id: job.id };
  });
  const created: QueuedDelivery[] = [];
  for (let i = 0; i < rows.length; i += 500) {
    const { rows: inserted } = await sql<{ id: string; endpoint_id: string; job_id: string }>`
      INSERT INTO webhook_deliveries (id, endpoint_id, brand_id, event_id, event_type, payload, fact_recorded_at, job_id, next_attempt_at)
      SELECT d.id, d.endpoint_id, d.brand_id, d.event_id, d.event_type, d.payload, d.fact_recorded_at, d.job_id, now()
      FROM jsonb_to_recordset(${JSON.stringify(rows.slice(i, i + 500))}::jsonb)
        AS d(id text, endpoint_id text, brand_id text, event_id text, event_type text, payload text, fact_recorded_at timestamptz, job_id text)
      ON CONFLICT (endpoint_id, event_id) DO NOTHING
      RETURNING id, endpoint_id, job_id`.execute(db);
    for (const r of inserted) created.push({ id: r.id, endpointId: r.endpoint_id, jobId: r.job_id });
  }
  return created;
}

/**
 * Turns facts that reached ClickHouse into deliveries, before their outbox confirmation: one row per
 * (endpoint, event), inserted ON CONFLICT DO NOTHING, so a replayed batch, a retry after a crash or
 * the outbox sweeper's confirmation all deliver once. Only new rows are queued (insertDeliveries);
 * a job that never reached Redis is queued by the delivery sweeper.
 */
export class WebhookFanOut {
  private readonly unqueued: RepeatedLog;

  constructor(
    private readonly db: Db,
    private readonly queue: DeliveryQueue | undefined,
    log: Logger,
  ) {
    this.unqueued = new RepeatedLog(log, 'warn', 'could not queue webhook deliveries; the delivery sweeper will', { countField: 'deliveries' });
  }

  /** Throws when Postgres fails (the batch is then retried, and inserts what is still missing). */
  async facts(kind: FactKindOfEvent, rows: { id: string; brand_id: string }[]): Promise<number> {
    if (rows.length === 0) return 0;
    const wdb = webhookDb(this.db);
    const brands = [...new Set(rows.map((r) => r.brand_id))];
    const endpoints = await wdb
      .selectFrom('webhook_endpoints')
      .select(['id', 'brand_id', 'event_types', 'attributed_only', 'include_sandbox', 'created_at'])
      .where('brand_id', 'in', brands)
      .where('disabled_at', 'is', null)
      .execute();
    if (endpoints.length === 0) return 0;
    const withEndpoints = new Set(endpoints.map((e) => e.brand_id));
    const events = await eventsOf(this.db, kind, rows.filter((r) => withEndpoints.has(r.brand_id)).map((r) => r.id));
    const deliveries: NewDelivery[] = [];
    for (const event of events) {
      let body: string | undefined;
      for (const endpoint of endpoints) {
        if (endpoint.brand_id !== event.brandId || !endpointTakes(endpoint, event)) continue;
        body ??= eventBody(event);
        deliveries.push({ id: randomUUID(), endpoint_id: endpoint.id, brand_id: event.brandId, event_id: event.id, event_type: event.type, payload: body, fact_recorded_at: event.recordedAt });
      }
    }
    const created = await insertDeliveries(this.db, deliveries);
    if (created.length > 0 && this.queue) {
      await this.queue.add(created).catch((err) => this.unqueued.report({ err }));
    }
    return created.length;
  }
}
