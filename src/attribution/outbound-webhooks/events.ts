import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../db/database';
import { ledgerItem, type LedgerItemRow } from '../reporting/ledger-item';
import type { EventType } from './tables';

/**
 * The event a fact makes (docs/webhooks.md, "Receiving webhooks"): its type, its stable id (from
 * the row's id, so a retry, a crash or a replay never makes a second one) and its body's data.
 * Rows are read from Postgres whole (to_jsonb), so columns added to the facts since show up here.
 */

export type FactKindOfEvent = 'installs' | 'ledger';

export type WebhookEvent = {
  id: string;
  type: EventType;
  brandId: string;
  recordedAt: Date;
  /** Filter inputs. */
  sandbox: boolean;
  unattributed: boolean;
  supersedes: string | null;
  data: Record<string, unknown>;
};

/** evt_ and the row's id: one id per fact, whatever happens. */
export const eventId = (rowId: string) => `evt_${rowId.replace(/-/g, '')}`;

const LEDGER_TYPES: Record<string, EventType> = {
  purchase: 'sale.created',
  renewal: 'sale.created',
  refund: 'refund.created',
  trial: 'lead.created',
  signup: 'lead.created',
  lead: 'lead.created',
};

/** The body, minified, as its bytes are kept and sent on every attempt. */
export function eventBody(event: Pick<WebhookEvent, 'id' | 'type' | 'brandId' | 'recordedAt' | 'data'>, test = false): string {
  return JSON.stringify({ id: event.id, type: event.type, timestamp: event.recordedAt.toISOString(), brand_id: event.brandId, test, data: event.data });
}

type Joined = { row: Record<string, unknown>; link_domain: string | null; link_slug: string | null; creator_name: string | null };

const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(String(v)).toISOString());

function linkOf(r: Joined) {
  const id = r.row.link_id;
  return id === null || id === undefined ? null : { id: Number(id), domain: r.link_domain ?? '', slug: r.link_slug ?? '' };
}
function creatorOf(r: Joined) {
  const id = r.row.creator_id;
  return id === null || id === undefined ? null : { id: String(id), name: r.creator_name ?? '' };
}

/** The events of these rows (installs or ledger_events ids) that make one; others make none. */
export async function eventsOf(db: Db, kind: FactKindOfEvent, ids: string[]): Promise<WebhookEvent[]> {
  if (ids.length === 0) return [];
  const table = kind === 'installs' ? sql`installs` : sql`ledger_events`;
  const { rows } = await sql<Joined>`
    SELECT to_jsonb(f) AS row, d.hostname AS link_domain, l.slug AS link_slug, c.name AS creator_name
    FROM ${table} f
    LEFT JOIN links l ON l.id = f.link_id
    LEFT JOIN domains d ON d.id = l.domain_id
    LEFT JOIN creators c ON c.id = f.creator_id
    WHERE f.id = ANY(${ids}::text[])`.execute(db);
  const events: WebhookEvent[] = [];
  for (const r of rows) {
    const event = kind === 'installs' ? installEvent(r) : ledgerEvent(r);
    if (event) events.push(event);
  }
  return events;
}

function installEvent(r: Joined): WebhookEvent | undefined {
  const row = r.row;
  // Only attributed installs make an event; duplicates never reach a table.
  if (row.attributed !== true) return undefined;
  return {
    id: eventId(String(row.id)),
    type: 'install.attributed',
    brandId: String(row.brand_id),
    recordedAt: new Date(String(row.recorded_at)),
    sandbox: false,
    unattributed: false,
    supersedes: null,
    data: {
      id: row.id,
      install_id: row.install_id,
      platform: row.platform,
      attributed: true,
      resolution_method: row.resolution_method,
      confidence: row.confidence === null || row.confidence === undefined ? 0 : Number(row.confidence),
      link: linkOf(r),
      code: row.code_label ?? null,
      creator: creatorOf(r),
      deep_link: row.deep_link ?? null,
      app_version: row.app_version ?? null,
      occurred_at: iso(row.occurred_at),
    },
  };
}

function ledgerEvent(r: Joined): WebhookEvent | undefined {
  const row = r.row;
  const type = LEDGER_TYPES[String(row.event_type)];
  if (!type) return undefined;
  const supersedes = row.supersedes === null || row.supersedes === undefined ? null : String(row.supersedes);
  return {
    id: eventId(String(row.id)),
    type,
    brandId: String(row.brand_id),
    recordedAt: new Date(String(row.recorded_at)),
    sandbox: row.sandbox === true,
    unattributed: row.resolution_method === 'unattributed',
    supersedes,
    data: {
      // The portal's ledger item, plus who wrote the row and when it was recorded (docs/webhooks.md).
      ...ledgerItem(
        {
          ...(row as LedgerItemRow),
          occurred_at: iso(row.occurred_at) as string,
          sandbox: row.sandbox === true,
          external_user_id: (row.external_user_id as string | null | undefined) ?? null,
          code_label: (row.code_label as string | null | undefined) ?? null,
          confidence: (row.confidence as number | null | undefined) ?? null,
        },
        linkOf(r),
        creatorOf(r),
      ),
      verified: row.verified === true,
      supersedes,
      recorded_at: iso(row.recorded_at),
    },
  };
}

/** A test event's body: sample data of the type, `test: true`, an id of its own. */
export function sampleEvent(type: EventType, brandId: string, now = new Date()): { id: string; body: string } {
  const id = `evt_test_${randomUUID().replace(/-/g, '')}`;
  const link = { id: 1, domain: 'go.example.com', slug: 'sample' };
  const creator = { id: '00000000-0000-4000-8000-000000000000', name: 'Sample Creator' };
  const at = now.toISOString();
  const data: Record<string, unknown> =
    type === 'install.attributed'
      ? {
          id: randomUUID(),
          install_id: 'sample-install-id',
          platform: 'ios',
          attributed: true,
          resolution_method: 'clipboard',
          confidence: 1,
          link,
          code: null,
          creator,
          deep_link: null,
          app_version: '1.0.0',
          occurred_at: at,
        }
      : {
          id: randomUUID(),
          event_type: type === 'sale.created' ? 'purchase' : type === 'refund.created' ? 'refund' : 'signup',
          transaction_id: 'sample-transaction',
          source: 'pixel',
          amount: type === 'refund.created' ? -9.99 : type === 'lead.created' ? 0 : 9.99,
          currency: 'USD',
          occurred_at: at,
          sandbox: false,
          external_user_id: null,
          link,
          creator,
          code: null,
          resolution_method: 'click',
          confidence: 1,
          verified: false,
          supersedes: null,
          recorded_at: at,
        };
  return { id, body: eventBody({ id, type, brandId, recordedAt: now, data }, true) };
}
