import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { z } from 'zod';
import type { Db } from '../../db/database';
import { conflict, notFound } from '../../refusal';
import { toPage } from '../reporting/paging';
import { sampleEvent } from './events';
import type { DeliveryQueue } from './queue';
import { type EventType, type WebhookDb, type WebhookDeliveriesTable, webhookDb } from './tables';

type DeliveryRow = Omit<WebhookDeliveriesTable, 'test' | 'attempt_count' | 'schedule_step' | 'status' | 'created_at'> & {
  test: boolean;
  attempt_count: number;
  schedule_step: number;
  status: 'pending' | 'succeeded' | 'failed';
  created_at: Date;
};

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/** A delivery as the portal answers it (docs/api.md). */
export function deliveryItem(row: DeliveryRow) {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempt_count: row.attempt_count,
    next_attempt_at: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    last_attempt_at: iso(row.last_attempt_at),
    response_status: row.response_status,
    error: row.error,
    test: row.test,
    created_at: new Date(row.created_at).toISOString(),
  };
}
export type DeliveryItem = ReturnType<typeof deliveryItem>;

/** Milliseconds since the epoch and id of the last delivery answered. */
export const deliveryCursor = z.tuple([z.number().int().min(0), z.string().max(64)]);

export type DeliveryFilter = { status?: string; event_type?: string; limit: number; cursor?: [number, string] };

const COLUMNS = [
  'id', 'endpoint_id', 'brand_id', 'event_id', 'event_type', 'payload', 'test', 'status', 'attempt_count', 'schedule_step',
  'next_attempt_at', 'last_attempt_at', 'response_status', 'error', 'fact_recorded_at', 'created_at',
] as const;

/** The deliveries of one endpoint and the test, replay and log reads on them; the endpoint is checked as the brand's by the caller. */
export class WebhookDeliveries {
  private readonly db: WebhookDb;

  constructor(
    db: Db,
    private readonly queue: DeliveryQueue,
  ) {
    this.db = webhookDb(db);
  }

  /** Newest first. */
  async list(endpointId: string, filter: DeliveryFilter) {
    let q = this.db.selectFrom('webhook_deliveries').select(COLUMNS).where('endpoint_id', '=', endpointId);
    if (filter.status) q = q.where('status', '=', filter.status as DeliveryRow['status']);
    if (filter.event_type) q = q.where('event_type', '=', filter.event_type);
    if (filter.cursor) {
      const [ms, id] = filter.cursor;
      // The cursor holds milliseconds, Postgres microseconds (one fan-out's rows share theirs): page
      // after the named row's exact created_at, the cursor's own only when that row is gone.
      const at = sql<Date>`coalesce((SELECT created_at FROM webhook_deliveries WHERE id = ${id} AND endpoint_id = ${endpointId}), ${new Date(ms)})`;
      q = q.where(sql<boolean>`(created_at, id) < (${at}, ${id})`);
    }
    const rows = (await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit + 1).execute()) as DeliveryRow[];
    const { data, pagination } = toPage(rows, filter.limit, (r) => [new Date(r.created_at).getTime(), r.id]);
    return { data: data.map(deliveryItem), pagination };
  }

  async get(endpointId: string, deliveryId: string): Promise<DeliveryRow> {
    const row = await this.db.selectFrom('webhook_deliveries').select(COLUMNS).where('id', '=', deliveryId).where('endpoint_id', '=', endpointId).executeTakeFirst();
    if (!row) throw notFound();
    return row as DeliveryRow;
  }

  /** The item plus the body as a JSON object and every attempt, first to last. */
  async detail(endpointId: string, deliveryId: string) {
    const row = await this.get(endpointId, deliveryId);
    const attempts = await this.db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('delivery_id', '=', deliveryId)
      .orderBy('attempt')
      .execute();
    return {
      ...deliveryItem(row),
      payload: JSON.parse(row.payload) as unknown,
      attempts: attempts.map((a) => ({
        attempt: a.attempt,
        at: new Date(a.at).toISOString(),
        response_status: a.response_status,
        duration_ms: a.duration_ms,
        error: a.error,
        response_excerpt: a.response_excerpt,
      })),
    };
  }

  /** Queues a delivery; while Redis is away it stays pending in Postgres and the delivery sweeper queues it. */
  private async queued(id: string, endpointId: string): Promise<void> {
    await this.queue.add([{ id, endpointId }]).catch(() => undefined);
  }

  /** A sample event of `type` sent once to the endpoint; it never changes the endpoint's health. */
  async test(brandId: string, endpointId: string, type: EventType): Promise<DeliveryItem> {
    const now = new Date();
    const event = sampleEvent(type, brandId, now);
    const row = (await this.db
      .insertInto('webhook_deliveries')
      .values({
        id: randomUUID(),
        endpoint_id: endpointId,
        brand_id: brandId,
        event_id: event.id,
        event_type: type,
        payload: event.body,
        test: true,
        next_attempt_at: now,
        last_attempt_at: null,
        response_status: null,
        error: null,
        fact_recorded_at: now,
      })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow()) as DeliveryRow;
    await this.queued(row.id, endpointId);
    return deliveryItem(row);
  }

  /** The same delivery back to pending with its kept bytes and id, its schedule restarted, in a job of its own; 409 delivery_pending while pending. */
  async replay(endpointId: string, deliveryId: string, endpointDisabled: boolean): Promise<DeliveryItem> {
    if (endpointDisabled) throw conflict('endpoint_disabled');
    const row = (await this.db
      .updateTable('webhook_deliveries')
      .set({ status: 'pending', schedule_step: 0, next_attempt_at: new Date(), error: null, job_id: null })
      .where('id', '=', deliveryId)
      .where('endpoint_id', '=', endpointId)
      .where('status', '!=', 'pending')
      .returning(COLUMNS)
      .executeTakeFirst()) as DeliveryRow | undefined;
    if (!row) {
      await this.get(endpointId, deliveryId); // 404 when unknown
      throw conflict('delivery_pending');
    }
    await this.queued(row.id, endpointId);
    return deliveryItem(row);
  }
}
