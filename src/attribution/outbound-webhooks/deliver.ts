import { sql } from 'kysely';
import type { Db } from '../../db/database';
import { webhookAttemptDuration, webhookAttempts, webhookDeliveryLag } from '../../metrics';
import { SecretBox } from '../webhooks/secret-box';
import type { AddressRules } from './addresses';
import { attempt, type AttemptResult, USER_AGENT } from './attempt';
import { endPendingDeliveries, signingSecrets } from './endpoints';
import { signatureHeader } from './signing';
import { type WebhookDb, webhookDb } from './tables';

export type DeliverySettings = {
  timeoutMs: number;
  /** Seconds before each retry: N waits make N+1 attempts. */
  retrySchedule: number[];
  disableAfterHours: number;
  rules: AddressRules;
  secretKey: string;
};

/** What the queue does with the job after one call: nothing more, or run it again at `at`. */
export type Outcome = { done: true } | { done: false; at: Date };

/** ±10% so retries of many deliveries failing together do not come back together. */
const jitter = (seconds: number) => seconds * 1000 * (0.9 + Math.random() * 0.2);

/**
 * Runs a delivery's next attempt and records it: the attempt, the delivery's state and the
 * endpoint's health (never for test events). Postgres holds the state; the job only its id.
 */
export class DeliveryRunner {
  private readonly db: WebhookDb;
  private readonly box: SecretBox;

  constructor(
    db: Db,
    private readonly settings: DeliverySettings,
  ) {
    this.db = webhookDb(db);
    this.box = new SecretBox(settings.secretKey);
  }

  /** Opened secrets by their sealed text (a rotation seals a new one): one AES-GCM open per secret, not per attempt. */
  private readonly opened = new Map<string, string[]>();

  private secrets(row: Parameters<typeof signingSecrets>[1], now: Date): string[] {
    const key = `${row.secret_encrypted}|${row.previous_secret_expires_at && row.previous_secret_expires_at > now ? row.previous_secret_encrypted : ''}`;
    let secrets = this.opened.get(key);
    if (!secrets) {
      if (this.opened.size >= 1000) this.opened.clear();
      secrets = signingSecrets(this.box, row, now);
      this.opened.set(key, secrets);
    }
    return secrets;
  }

  /** The endpoint a delivery goes to (for the per-endpoint limit), or undefined when it is gone or done. */
  async load(deliveryId: string) {
    return this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select([
        'd.id', 'd.endpoint_id', 'd.event_id', 'd.payload', 'd.test', 'd.status', 'd.attempt_count', 'd.schedule_step', 'd.next_attempt_at', 'd.fact_recorded_at',
        'e.url', 'e.disabled_at', 'e.secret_encrypted', 'e.previous_secret_encrypted', 'e.previous_secret_expires_at', 'e.created_at', 'e.brand_id',
      ])
      .where('d.id', '=', deliveryId)
      .executeTakeFirst();
  }

  async run(d: NonNullable<Awaited<ReturnType<DeliveryRunner['load']>>>): Promise<Outcome> {
    if (d.status !== 'pending') return { done: true };
    if (d.disabled_at && !d.test) {
      await endPendingDeliveries(this.db, d.endpoint_id);
      return { done: true };
    }
    const now = new Date();
    if (d.next_attempt_at && d.next_attempt_at.getTime() > now.getTime() + 1000) return { done: false, at: d.next_attempt_at };
    const secrets = this.secrets({ ...d, id: d.endpoint_id } as never, now);
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': d.event_id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(secrets, d.event_id, timestamp, d.payload),
    };
    const at = new Date();
    const result = await attempt({ url: d.url, body: d.payload, headers, timeoutMs: this.settings.timeoutMs, rules: this.settings.rules });
    webhookAttempts.inc({ outcome: result.error ?? 'success' });
    webhookAttemptDuration.observe(result.durationMs / 1000);
    return this.record(d, at, result);
  }

  /**
   * The endpoint's health after an attempt. A success changes the row only when it was failing or its
   * last success is a second old, so concurrent successes do not queue on the endpoint's row lock.
   */
  private async recordHealth(endpointId: string, at: Date, ok: boolean, gone: boolean): Promise<void> {
    if (ok) {
      await sql`
        UPDATE webhook_endpoints SET last_attempt_at = ${at}, last_success_at = ${at}, failing_since = NULL
        WHERE id = ${endpointId}
          AND (failing_since IS NOT NULL OR last_success_at IS NULL OR last_success_at < ${at}::timestamptz - interval '1 second')`.execute(this.db);
      return;
    }
    await sql`
      UPDATE webhook_endpoints SET last_attempt_at = ${at}, failing_since = coalesce(failing_since, ${at}::timestamptz)
      WHERE id = ${endpointId}`.execute(this.db);
    if (gone) await disableEndpoint(this.db, endpointId, 'gone');
  }

  private async record(d: NonNullable<Awaited<ReturnType<DeliveryRunner['load']>>>, at: Date, r: AttemptResult): Promise<Outcome> {
    const ok = r.error === null;
    const step = d.schedule_step + 1;
    const schedule = this.settings.retrySchedule;
    const gone = r.status === 410 && !d.test;
    const retry = !ok && !gone && !d.test && step <= schedule.length;
    let next: Date | null = null;
    if (retry) next = new Date(at.getTime() + r.durationMs + Math.max(jitter(schedule[step - 1]!), r.retryAfterMs ?? 0));
    const status = ok ? 'succeeded' : retry ? 'pending' : 'failed';
    // The delivery's new state and its attempt in one statement; none when another run recorded this attempt first (a job run twice).
    const { rows } = await sql<{ delivery_id: string }>`
      WITH d AS (
        UPDATE webhook_deliveries
        SET status = ${status}, attempt_count = ${d.attempt_count + 1}, schedule_step = ${step}, next_attempt_at = ${next},
            last_attempt_at = ${at}, response_status = ${r.status}, error = ${r.error}
        WHERE id = ${d.id} AND attempt_count = ${d.attempt_count} AND status = 'pending'
        RETURNING id
      )
      INSERT INTO webhook_attempts (delivery_id, attempt, at, response_status, duration_ms, error, response_excerpt)
      SELECT id, ${d.attempt_count + 1}, ${at}, ${r.status}, ${r.durationMs}, ${r.error}, ${r.excerpt} FROM d
      RETURNING delivery_id`.execute(this.db);
    const recorded = rows.length > 0;
    if (recorded && !d.test) await this.recordHealth(d.endpoint_id, at, ok, gone);
    if (!recorded) return { done: true };
    if (ok && !d.test && d.schedule_step === d.attempt_count) webhookDeliveryLag.observe(Math.max(0, Date.now() - d.fact_recorded_at.getTime()) / 1000);
    if (!ok && !d.test) await disableFailing(this.db, this.settings.disableAfterHours, d.endpoint_id);
    return retry && next ? { done: false, at: next } : { done: true };
  }
}

/** Disables an endpoint (if enabled) and ends its pending deliveries. */
export async function disableEndpoint(db: WebhookDb, endpointId: string, reason: 'gone' | 'failing'): Promise<void> {
  const { numUpdatedRows } = await db
    .updateTable('webhook_endpoints')
    .set({ disabled_at: new Date(), disabled_reason: reason, updated_at: new Date() })
    .where('id', '=', endpointId)
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  if (numUpdatedRows > 0n) await endPendingDeliveries(db, endpointId);
}

/** Endpoints failing without a success for `hours` are disabled (`failing`); one endpoint, or all. */
export async function disableFailing(db: WebhookDb, hours: number, endpointId?: string): Promise<number> {
  let q = db
    .selectFrom('webhook_endpoints')
    .select('id')
    .where('disabled_at', 'is', null)
    .where('failing_since', '<', sql<Date>`now() - make_interval(hours => ${hours})`);
  if (endpointId) q = q.where('id', '=', endpointId);
  const due = await q.limit(1000).execute();
  for (const { id } of due) await disableEndpoint(db, id, 'failing');
  return due.length;
}

export { webhookDb };
