import { type Kysely, sql } from 'kysely';

/**
 * Outbound webhooks (docs/webhooks.md, "Receiving webhooks"): a brand's endpoints, one delivery
 * per (endpoint, event) — the unique key that makes every fan-out path deliver once — and each
 * delivery's attempts. A delivery keeps the exact body bytes it re-sends on every attempt.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE webhook_endpoints (
      id text PRIMARY KEY,
      brand_id text NOT NULL REFERENCES brands(id) ON DELETE CASCADE,
      url text NOT NULL,
      description text,
      event_types text[] NOT NULL,
      attributed_only boolean NOT NULL DEFAULT true,
      include_sandbox boolean NOT NULL DEFAULT false,
      secret_encrypted text NOT NULL,
      secret_hint text NOT NULL,
      previous_secret_encrypted text,
      previous_secret_expires_at timestamptz,
      disabled_at timestamptz,
      disabled_reason text,
      failing_since timestamptz,
      last_attempt_at timestamptz,
      last_success_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (brand_id, url)
    )`.execute(db);
  await sql`
    CREATE TABLE webhook_deliveries (
      id text PRIMARY KEY,
      endpoint_id text NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
      brand_id text NOT NULL,
      event_id text NOT NULL,
      event_type text NOT NULL,
      payload text NOT NULL,
      test boolean NOT NULL DEFAULT false,
      status text NOT NULL DEFAULT 'pending',
      attempt_count integer NOT NULL DEFAULT 0,
      schedule_step integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      last_attempt_at timestamptz,
      response_status integer,
      error text,
      fact_recorded_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (endpoint_id, event_id)
    )`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_feed ON webhook_deliveries (endpoint_id, created_at DESC, id DESC)`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_age ON webhook_deliveries (created_at)`.execute(db);
  await sql`
    CREATE TABLE webhook_attempts (
      delivery_id text NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
      attempt integer NOT NULL,
      at timestamptz NOT NULL,
      response_status integer,
      duration_ms integer NOT NULL,
      error text,
      response_excerpt text,
      PRIMARY KEY (delivery_id, attempt)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS webhook_attempts`.execute(db);
  await sql`DROP TABLE IF EXISTS webhook_deliveries`.execute(db);
  await sql`DROP TABLE IF EXISTS webhook_endpoints`.execute(db);
}
