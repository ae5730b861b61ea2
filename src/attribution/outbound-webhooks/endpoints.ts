import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../db/database';
import { conflict, notFound } from '../../refusal';
import { SecretBox } from '../webhooks/secret-box';
import { type AddressRules, checkUrl } from './addresses';
import { newSecret, secretHint } from './signing';
import type { Selectable } from 'kysely';
import { EVENT_TYPES, type EventType, type WebhookDb, type WebhookEndpointsTable, webhookDb } from './tables';

export type EndpointRow = Selectable<WebhookEndpointsTable>;

export type EndpointSettings = {
  rules: AddressRules;
  maxEndpoints: number;
};

export type CreateEndpoint = {
  url: string;
  description?: string | null;
  event_types?: EventType[];
  attributed_only?: boolean;
  include_sandbox?: boolean;
};

export type UpdateEndpoint = Partial<CreateEndpoint> & { enabled?: boolean };

export const DEFAULT_GRACE_SECONDS = 86_400;

/** The sealing context of an endpoint's secrets: a sealed value copied to another row does not open. */
const secretContext = (id: string) => `webhook-endpoint:${id}`;

export type EndpointStatus = 'active' | 'failing' | 'disabled';

/** An endpoint as the portal answers it (docs/api.md); never a secret, only its hint. */
export function endpointItem(row: EndpointRow, now = new Date()) {
  const status: EndpointStatus = row.disabled_at ? 'disabled' : row.failing_since ? 'failing' : 'active';
  const graceOpen = row.previous_secret_expires_at !== null && row.previous_secret_expires_at > now;
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    event_types: row.event_types,
    attributed_only: row.attributed_only,
    include_sandbox: row.include_sandbox,
    enabled: status !== 'disabled',
    status,
    failing_since: iso(row.failing_since),
    disabled_at: iso(row.disabled_at),
    disabled_reason: row.disabled_reason,
    secret_hint: row.secret_hint,
    previous_secret_expires_at: graceOpen ? iso(row.previous_secret_expires_at) : null,
    last_attempt_at: iso(row.last_attempt_at),
    last_success_at: iso(row.last_success_at),
    created_at: new Date(row.created_at).toISOString(),
  };
}
export type EndpointItem = ReturnType<typeof endpointItem>;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The event types as stored: the four by default, each once, in the documented order. */
const eventTypes = (types: EventType[] | undefined) => (types ? EVENT_TYPES.filter((t) => types.includes(t)) : [...EVENT_TYPES]);

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

/**
 * A brand's webhook endpoints: every query is scoped to the brand, so another brand's id is
 * not_found. Secrets are sealed as billing connections' are and answered only by create and rotate.
 */
export class WebhookEndpoints {
  private readonly db: WebhookDb;
  private readonly box: SecretBox;

  constructor(
    db: Db,
    secretKey: string,
    private readonly settings: EndpointSettings,
  ) {
    this.db = webhookDb(db);
    this.box = new SecretBox(secretKey);
  }

  async list(brandId: string): Promise<EndpointRow[]> {
    return this.db.selectFrom('webhook_endpoints').selectAll().where('brand_id', '=', brandId).orderBy('created_at').orderBy('id').execute();
  }

  /** The operator's view: one brand's endpoints, or every brand's. */
  async listAll(brandId: string | undefined): Promise<EndpointRow[]> {
    let q = this.db.selectFrom('webhook_endpoints').selectAll();
    if (brandId !== undefined) q = q.where('brand_id', '=', brandId);
    return q.orderBy('created_at').orderBy('id').limit(1000).execute();
  }

  async get(brandId: string | undefined, id: string): Promise<EndpointRow> {
    let q = this.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id);
    if (brandId !== undefined) q = q.where('brand_id', '=', brandId);
    const row = await q.executeTakeFirst();
    if (!row) throw notFound();
    return row;
  }

  /** 422 invalid_url (UrlRefused), 409 endpoint_limit_reached or webhook_url_taken. */
  async create(brandId: string, input: CreateEndpoint): Promise<{ row: EndpointRow; secret: string }> {
    const { url } = await checkUrl(input.url, this.settings.rules);
    const id = randomUUID();
    const secret = newSecret();
    const row = await this.db.transaction().execute(async (tx) => {
      // One creation per brand at a time, so the limit holds under concurrent requests.
      await sql`SELECT pg_advisory_xact_lock(hashtext('webhook-endpoints:' || ${brandId}))`.execute(tx);
      const { n } = await tx.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<number>().as('n')).where('brand_id', '=', brandId).executeTakeFirstOrThrow();
      if (Number(n) >= this.settings.maxEndpoints) throw conflict('endpoint_limit_reached');
      const taken = await tx.selectFrom('webhook_endpoints').select('id').where('brand_id', '=', brandId).where('url', '=', url.href).executeTakeFirst();
      if (taken) throw conflict('webhook_url_taken');
      return tx
        .insertInto('webhook_endpoints')
        .values({
          id,
          brand_id: brandId,
          url: url.href,
          description: input.description ?? null,
          event_types: eventTypes(input.event_types),
          attributed_only: input.attributed_only ?? true,
          include_sandbox: input.include_sandbox ?? false,
          secret_encrypted: this.box.seal(secret, secretContext(id)),
          secret_hint: secretHint(secret),
          previous_secret_encrypted: null,
          previous_secret_expires_at: null,
          disabled_at: null,
          disabled_reason: null,
          failing_since: null,
          last_attempt_at: null,
          last_success_at: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    });
    return { row, secret };
  }

  /** A brand's change; enabling clears the failure state, but never an operator's disabling (409 endpoint_disabled). */
  async update(brandId: string, id: string, input: UpdateEndpoint): Promise<EndpointRow> {
    const current = await this.get(brandId, id);
    const url = input.url !== undefined ? (await checkUrl(input.url, this.settings.rules)).url.href : undefined;
    const changes: Record<string, unknown> = {};
    if (url !== undefined) changes.url = url;
    if (input.description !== undefined) changes.description = input.description;
    if (input.event_types !== undefined) changes.event_types = eventTypes(input.event_types);
    if (input.attributed_only !== undefined) changes.attributed_only = input.attributed_only;
    if (input.include_sandbox !== undefined) changes.include_sandbox = input.include_sandbox;
    if (input.enabled === true && current.disabled_at) {
      if (current.disabled_reason === 'operator') throw conflict('endpoint_disabled');
      Object.assign(changes, { disabled_at: null, disabled_reason: null, failing_since: null });
    } else if (input.enabled === true) {
      changes.failing_since = null;
    }
    const disabling = input.enabled === false && !current.disabled_at;
    if (disabling) Object.assign(changes, { disabled_at: new Date(), disabled_reason: 'user' });
    if (Object.keys(changes).length === 0) return current;
    try {
      return await this.db.transaction().execute(async (tx) => {
        const row = await tx
          .updateTable('webhook_endpoints')
          .set({ ...changes, updated_at: new Date() })
          .where('id', '=', id)
          .where('brand_id', '=', brandId)
          .returningAll()
          .executeTakeFirst();
        if (!row) throw notFound();
        if (disabling) await endPendingDeliveries(tx, id);
        return row;
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('webhook_url_taken');
      throw err;
    }
  }

  async delete(brandId: string, id: string): Promise<void> {
    const { numDeletedRows } = await this.db.deleteFrom('webhook_endpoints').where('id', '=', id).where('brand_id', '=', brandId).executeTakeFirst();
    if (numDeletedRows === 0n) throw notFound();
  }

  /**
   * A new secret; the one it replaces keeps signing for `graceSeconds` (0: not at all). A rotation
   * inside a grace window ends the older secret at once: never more than two sign.
   */
  async rotate(brandId: string, id: string, graceSeconds = DEFAULT_GRACE_SECONDS): Promise<{ row: EndpointRow; secret: string }> {
    const current = await this.get(brandId, id);
    const secret = newSecret();
    const row = await this.db
      .updateTable('webhook_endpoints')
      .set({
        secret_encrypted: this.box.seal(secret, secretContext(id)),
        secret_hint: secretHint(secret),
        previous_secret_encrypted: graceSeconds > 0 ? current.secret_encrypted : null,
        previous_secret_expires_at: graceSeconds > 0 ? new Date(Date.now() + graceSeconds * 1000) : null,
        updated_at: new Date(),
      })
      .where('id', '=', id)
      .where('brand_id', '=', brandId)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw notFound();
    return { row, secret };
  }

  /**
   * What the portal's banner shows: endpoints failing, and those disabled by anything but their
   * brand (failing too long, gone, the operator), with since when.
   */
  async alerts(brandId: string): Promise<{ endpoint_id: string; url: string; status: 'failing' | 'disabled'; since: string }[]> {
    const rows = await this.db
      .selectFrom('webhook_endpoints')
      .select(['id', 'url', 'failing_since', 'disabled_at', 'disabled_reason'])
      .where('brand_id', '=', brandId)
      .where((eb) => eb.or([eb.and([eb('disabled_at', 'is', null), eb('failing_since', 'is not', null)]), eb.and([eb('disabled_at', 'is not', null), eb('disabled_reason', '!=', 'user')])]))
      .orderBy('created_at')
      .execute();
    return rows.map((r) => ({
      endpoint_id: r.id,
      url: r.url,
      status: r.disabled_at ? 'disabled' : 'failing',
      since: (r.disabled_at ?? r.failing_since)!.toISOString(),
    }));
  }

  /** The operator's switch: disabling names `operator`; enabling clears every failure state. */
  async setEnabledByOperator(id: string, enabled: boolean): Promise<EndpointRow> {
    const current = await this.get(undefined, id);
    const changes = enabled
      ? { disabled_at: null, disabled_reason: null, failing_since: null }
      : { disabled_at: current.disabled_at ?? new Date(), disabled_reason: 'operator' as const };
    return this.db.transaction().execute(async (tx) => {
      const row = await tx.updateTable('webhook_endpoints').set({ ...changes, updated_at: new Date() }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
      if (!enabled) await endPendingDeliveries(tx, id);
      return row;
    });
  }

  /** The secrets that sign now, newest first (the previous one only inside its grace window). */
  signingSecrets(row: EndpointRow, now = new Date()): string[] {
    return signingSecrets(this.box, row, now);
  }
}

/** The secrets that sign now, newest first. */
export function signingSecrets(box: SecretBox, row: EndpointRow, now = new Date()): string[] {
  const secrets = [box.open(row.secret_encrypted, secretContext(row.id))];
  if (row.previous_secret_encrypted && row.previous_secret_expires_at && row.previous_secret_expires_at > now) {
    secrets.push(box.open(row.previous_secret_encrypted, secretContext(row.id)));
  }
  return secrets;
}

/** A disabled endpoint's pending deliveries end failed (`endpoint_disabled`); enabling it again resends nothing. */
export async function endPendingDeliveries(db: WebhookDb, endpointId: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', error: 'endpoint_disabled', next_attempt_at: null })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute();
}
