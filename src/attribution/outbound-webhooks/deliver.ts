import { sql } from 'kysely';
import { Batcher } from '../../db/batcher';
import type { Db } from '../../db/database';
import { webhookAttemptDuration, webhookAttempts, webhookDeliveryLag } from '../../metrics';
import { SecretBox } from '../webhooks/secret-box';
import type { AddressRules } from './addresses';
import { attempt, type AttemptResult, USER_AGENT } from './attempt';
import { endPendingDeliveries, signingSecrets } from './endpoints';
import { signatureHeader } from './signing';
import { type WebhookDb, webhookDb } from './tables';

/** An attempt as recorded: the delivery's state before (`n` attempts) and after it. */
type RecordedAttempt = {
  id: string;
  n: number;
  status: 'pending' | 'succeeded' | 'failed';
  step: number;
  next: Date | null;
  at: Date;
  rs: number | null;
  err: string | null;
  dur: number;
  excerpt: string | null;
};

/** A delivery with what its attempt needs of its endpoint. */
export type LoadedDelivery = {
  id: string;
  endpoint_id: string;
  event_id: string;
  payload: string;
  test: boolean;
  status: 'pending' | 'succeeded' | 'failed';
  attempt_count: number;
  schedule_step: number;
  next_attempt_at: Date | null;
  fact_recorded_at: Date;
  url: string;
  disabled_at: Date | null;
  failing_since: Date | null;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  brand_id: string;
};

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
 * endpoint's health (never for test events). Postgres holds the state; a job only ids. Once
 * attempted, a delivery leaves its batch's job (job_id NULL): a retry is a job of its own.
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

  /** When this process last wrote each endpoint's last success (ms). */
  private readonly successWritten = new Map<string, number>();

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
  /** Look-ups made while one is in flight share the next statement (one at a time: fewer, larger statements). */
  private readonly loads = new Batcher<string, LoadedDelivery | undefined>(
    async (ids) => {
      // Plain SQL: the query builder's compilation costs more than this look-up.
      const { rows } = await sql<LoadedDelivery>`
        SELECT d.id, d.endpoint_id, d.event_id, d.payload, d.test, d.status, d.attempt_count, d.schedule_step, d.next_attempt_at, d.fact_recorded_at,
               e.url, e.disabled_at, e.failing_since, e.secret_encrypted, e.previous_secret_encrypted, e.previous_secret_expires_at, e.created_at, e.brand_id
        FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.id = ANY(${ids}::text[])`.execute(this.db);
      const byId = new Map(rows.map((r) => [r.id, r]));
      return ids.map((id) => byId.get(id));
    },
    { maxBatch: 200, maxRunning: 1 },
  );

  /** The delivery and what its attempt needs of its endpoint; undefined when it is gone. */
  load(deliveryId: string): Promise<LoadedDelivery | undefined> {
    return this.loads.call(deliveryId);
  }

  /** Endpoints whose 410 is being recorded here, and that record (which ends their other deliveries). */
  private readonly ending = new Map<string, Promise<unknown>>();

  async run(delivery: LoadedDelivery): Promise<Outcome> {
    let d: LoadedDelivery | undefined = delivery;
    // Read before its endpoint's 410 was recorded: read again once it is, so it is not attempted.
    const ending = this.ending.get(d.endpoint_id);
    if (ending) {
      await ending.catch(() => {});
      d = await this.load(d.id);
      if (!d) return { done: true };
    }
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
   * Whether this attempt writes its endpoint's health: always after a failure or a first success
   * after failing; a healthy endpoint's last success at most once a second from this process, so
   * concurrent successes do not queue on the endpoint's row lock. Test events never do.
   */
  private touchesEndpoint(d: LoadedDelivery, at: Date, ok: boolean): boolean {
    if (d.test) return false;
    if (!ok || d.failing_since !== null) return true;
    const written = this.successWritten.get(d.endpoint_id);
    if (written !== undefined && at.getTime() - written < 1000) return false;
    if (this.successWritten.size >= 10_000) this.successWritten.clear();
    this.successWritten.set(d.endpoint_id, at.getTime());
    return true;
  }

  /** Attempts whose endpoint stays as it is, recorded together (one statement at a time); each answers whether it was recorded. */
  private readonly plainRecords = new Batcher<RecordedAttempt, boolean>(
    async (attempts) => {
      const { rows } = await sql<{ delivery_id: string }>`
        WITH i AS (
          SELECT * FROM jsonb_to_recordset(${JSON.stringify(attempts)}::jsonb)
            AS i(id text, n int, status text, step int, next timestamptz, at timestamptz, rs int, err text, dur int, excerpt text)
        ),
        d AS (
          UPDATE webhook_deliveries w
          SET status = i.status, attempt_count = i.n + 1, schedule_step = i.step, next_attempt_at = i.next,
              last_attempt_at = i.at, response_status = i.rs, error = i.err, job_id = NULL
          FROM i WHERE w.id = i.id AND w.attempt_count = i.n AND w.status = 'pending'
          RETURNING w.id
        )
        INSERT INTO webhook_attempts (delivery_id, attempt, at, response_status, duration_ms, error, response_excerpt)
        SELECT i.id, i.n + 1, i.at, i.rs, i.dur, i.err, i.excerpt FROM i JOIN d ON d.id = i.id
        RETURNING delivery_id`.execute(this.db);
      const done = new Set(rows.map((r) => r.delivery_id));
      return attempts.map((a) => done.has(a.id));
    },
    { maxBatch: 200, maxRunning: 1 },
  );

  /**
   * One statement: the delivery's new state, its attempt and its endpoint's health (a 410 disables
   * it and ends its other pending deliveries), so no reader sees one without the other. False when
   * another run recorded this attempt first (a job run twice).
   */
  private async recordWithHealth(d: LoadedDelivery, a: RecordedAttempt, ok: boolean, gone: boolean): Promise<boolean> {
    const { rows } = await sql<{ delivery_id: string }>`
      WITH d AS (
        UPDATE webhook_deliveries
        SET status = ${a.status}, attempt_count = ${a.n + 1}, schedule_step = ${a.step}, next_attempt_at = ${a.next},
            last_attempt_at = ${a.at}, response_status = ${a.rs}, error = ${a.err}, job_id = NULL
        WHERE id = ${a.id} AND attempt_count = ${a.n} AND status = 'pending'
        RETURNING id
      ),
      a AS (
        INSERT INTO webhook_attempts (delivery_id, attempt, at, response_status, duration_ms, error, response_excerpt)
        SELECT id, ${a.n + 1}, ${a.at}, ${a.rs}, ${a.dur}, ${a.err}, ${a.excerpt} FROM d
        RETURNING delivery_id
      ),
      e AS (
        UPDATE webhook_endpoints
        SET last_attempt_at = ${a.at},
            last_success_at = CASE WHEN ${ok}::boolean THEN ${a.at}::timestamptz ELSE last_success_at END,
            failing_since = CASE WHEN ${ok}::boolean THEN NULL ELSE coalesce(failing_since, ${a.at}::timestamptz) END,
            disabled_reason = CASE WHEN ${gone}::boolean AND disabled_at IS NULL THEN 'gone' ELSE disabled_reason END,
            disabled_at = CASE WHEN ${gone}::boolean THEN coalesce(disabled_at, now()) ELSE disabled_at END
        WHERE id = ${d.endpoint_id} AND EXISTS (SELECT 1 FROM d)
        RETURNING id
      ),
      x AS (
        UPDATE webhook_deliveries SET status = 'failed', error = 'endpoint_disabled', next_attempt_at = NULL
        WHERE endpoint_id = ${d.endpoint_id} AND ${gone}::boolean AND status = 'pending' AND id <> ${a.id} AND EXISTS (SELECT 1 FROM d)
        RETURNING id
      )
      SELECT delivery_id FROM a`.execute(this.db);
    return rows.length > 0;
  }

  private async record(d: LoadedDelivery, at: Date, r: AttemptResult): Promise<Outcome> {
    const ok = r.error === null;
    const step = d.schedule_step + 1;
    const schedule = this.settings.retrySchedule;
    const gone = r.status === 410 && !d.test;
    const retry = !ok && !gone && !d.test && step <= schedule.length;
    let next: Date | null = null;
    if (retry) next = new Date(at.getTime() + r.durationMs + Math.max(jitter(schedule[step - 1]!), r.retryAfterMs ?? 0));
    const status = ok ? 'succeeded' : retry ? 'pending' : 'failed';
    const touch = this.touchesEndpoint(d, at, ok);
    const attempt: RecordedAttempt = { id: d.id, n: d.attempt_count, status, step, next, at, rs: r.status, err: r.error, dur: r.durationMs, excerpt: r.excerpt };
    // The endpoint untouched (most successes): attempts of one turn share a statement. Otherwise one
    // statement holds the delivery's state, its attempt and its endpoint's health.
    let recorded: boolean;
    if (gone) {
      // Set before any other attempt of this process can start (the same turn of the event loop).
      const recording = this.recordWithHealth(d, attempt, ok, gone);
      this.ending.set(d.endpoint_id, recording);
      recorded = await recording.finally(() => {
        if (this.ending.get(d.endpoint_id) === recording) this.ending.delete(d.endpoint_id);
      });
    } else recorded = touch ? await this.recordWithHealth(d, attempt, ok, gone) : await this.plainRecords.call(attempt);
    if (!recorded) return { done: true };
    if (ok && !d.test && d.schedule_step === d.attempt_count) webhookDeliveryLag.observe(Math.max(0, Date.now() - d.fact_recorded_at.getTime()) / 1000);
    if (!ok && !d.test) await disableFailing(this.db, this.settings.disableAfterHours, d.endpoint_id);
    return retry && next ? { done: false, at: next } : { done: true };
  }
}

/** Disables an endpoint (if enabled) and ends its pending deliveries. */
export async function disableEndpoint(db: WebhookDb, endpointId: string, reason: 'gone' | 'failing'): Promise<void> {
  // One statement: nobody sees the endpoint disabled with deliveries still pending.
  await sql`
    WITH e AS (
      UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = ${reason}, updated_at = now()
      WHERE id = ${endpointId} AND disabled_at IS NULL
      RETURNING id
    )
    UPDATE webhook_deliveries SET status = 'failed', error = 'endpoint_disabled', next_attempt_at = NULL
    WHERE endpoint_id IN (SELECT id FROM e) AND status = 'pending'`.execute(db);
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
