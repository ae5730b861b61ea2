import type { ColumnType, Generated, Kysely } from 'kysely';
import type { Db } from '../../db/database';
import type { Database } from '../../db/schema';

/** The tables of migrations/0016 and 0019, kept beside the code that owns them. */

type Stamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface WebhookEndpointsTable {
  id: string;
  brand_id: string;
  /** WHATWG-normalised: the brand's URLs are unique in this form. */
  url: string;
  description: string | null;
  event_types: string[];
  attributed_only: boolean;
  include_sandbox: boolean;
  /** Sealed (src/attribution/webhooks/secret-box.ts), context `webhook-endpoint:<id>`. */
  secret_encrypted: string;
  secret_hint: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
  disabled_at: Date | null;
  disabled_reason: 'user' | 'failing' | 'gone' | 'operator' | null;
  failing_since: Date | null;
  last_attempt_at: Date | null;
  last_success_at: Date | null;
  created_at: Stamp;
  updated_at: Stamp;
}

export interface WebhookDeliveriesTable {
  id: string;
  endpoint_id: string;
  brand_id: string;
  event_id: string;
  event_type: string;
  /** The body's exact bytes, sent again on every attempt. */
  payload: string;
  test: Generated<boolean>;
  status: ColumnType<'pending' | 'succeeded' | 'failed', 'pending' | undefined, 'pending' | 'succeeded' | 'failed'>;
  attempt_count: Generated<number>;
  /** Attempts since the schedule last (re)started: a replay starts it again, attempts accumulate. */
  schedule_step: Generated<number>;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  response_status: number | null;
  error: string | null;
  /** When the fact was recorded: delivery lag is measured from it. */
  fact_recorded_at: Date;
  /** The queue job that carries it until its first attempt (migrations/0019); NULL: a job of its own, id the delivery's. */
  job_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Stamp;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  attempt: number;
  at: Date;
  response_status: number | null;
  duration_ms: number;
  error: string | null;
  response_excerpt: string | null;
}

export type WebhookTables = {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
};

export type WebhookDb = Kysely<Database & WebhookTables>;

export const webhookDb = (db: Db): WebhookDb => db.withTables<WebhookTables>();

export const EVENT_TYPES = ['install.attributed', 'sale.created', 'refund.created', 'lead.created'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const EVENT_DESCRIPTIONS: Record<EventType, string> = {
  'install.attributed': 'An app install attributed to a link, a clipboard token, a code or an IP match',
  'sale.created': 'A purchase or renewal recorded in the ledger',
  'refund.created': 'A refund recorded in the ledger (negative amount)',
  'lead.created': 'A trial, signup or lead recorded in the ledger',
};

export const DELIVERY_ERRORS = ['timeout', 'connection', 'dns', 'tls', 'blocked_address', 'redirect', 'http_status', 'endpoint_disabled'] as const;
export type DeliveryError = (typeof DELIVERY_ERRORS)[number];
