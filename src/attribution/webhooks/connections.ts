import type { Selectable, Updateable } from 'kysely';
import { z } from 'zod';
import type { Db } from '../../db/database';
import type { BillingConnectionsTable } from '../../db/schema';
import { conflict, notFound } from '../../refusal';
import { newId, newToken, sha256 } from '../../secrets';
import { PROVIDERS, type Provider } from '../ledger/types';
import { SETTINGS_SCHEMAS } from './providers';
import { SecretBox } from './secret-box';
import { unsignedWarning } from './unsigned';

/**
 * Billing connections (docs/webhooks.md#connections): one per (brand, provider). Shared by the
 * portal routes (create, update, delete), the internal routes (list, delete) and the
 * webhook route (find by token, record the outcome of a delivery).
 */

export type ConnectionStatus = 'awaiting_first_event' | 'connected' | 'error';
type Row = Selectable<BillingConnectionsTable>;

/** A connection as the portal and internal API answer it: never a secret, never a hash. */
export type ConnectionAnswer = {
  id: string;
  brand_id: string;
  provider: Provider;
  status: ConnectionStatus;
  last_error: string | null;
  settings: Record<string, unknown>;
  webhook_url: string;
  last_event_at: Date | null;
  signing_secret_set: boolean;
  /** Adapty only: whether the sandbox endpoint's Authorization value is stored. */
  sandbox_secret_set?: boolean;
  /** While no secret authenticates deliveries: what that allows, in words (./unsigned.ts); else null. */
  signing_secret_warning: string | null;
  created_at: Date;
};

/** What the webhook route needs of the connection a URL token names. */
export type WebhookConnection = {
  id: string;
  brandId: string;
  provider: Provider;
  status: ConnectionStatus;
  signingSecret: string | null;
  sandboxSecret: string | null;
  settings: unknown;
};

/** A signing secret as pasted; blank or null means none (on update: remove the stored one). */
const secret = z
  .string()
  .max(500)
  .nullish()
  .transform((v) => (v === undefined ? undefined : v?.trim() ? v : null));
export const createConnectionBody = z.object({
  provider: z.enum(PROVIDERS),
  signing_secret: secret,
  settings: z.record(z.string(), z.unknown()).optional(),
});
/** `settings` is merged into the stored settings; a key set to null is removed. */
export const updateConnectionBody = z.object({
  signing_secret: secret,
  settings: z.record(z.string(), z.unknown()).optional(),
});

/** The svw_ token in the webhook URL: 32 random bytes, the connection's baseline authentication. */
const TOKEN_PREFIX = 'svw_';

export class Connections {
  private readonly box: SecretBox;

  constructor(
    private readonly db: Db,
    secretKey: string,
    private readonly publicBaseUrl: string,
  ) {
    this.box = new SecretBox(secretKey);
  }

  async create(brandId: string, body: z.output<typeof createConnectionBody>): Promise<ConnectionAnswer> {
    const id = newId();
    const token = newToken(TOKEN_PREFIX, 32);
    const { settings, sandboxSecret } = splitSettings(body.provider, body.settings ?? {});
    const row = await this.db
      .insertInto('billing_connections')
      .values({
        id,
        brand_id: brandId,
        provider: body.provider,
        token_hash: sha256(token),
        token_encrypted: this.box.seal(token, `${id}:token`),
        signing_secret_encrypted: body.signing_secret ? this.box.seal(body.signing_secret, `${id}:signing_secret`) : null,
        sandbox_secret_encrypted: sandboxSecret ? this.box.seal(sandboxSecret, `${id}:sandbox_secret`) : null,
        settings: JSON.stringify(settings),
      })
      .onConflict((oc) => oc.columns(['brand_id', 'provider']).doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!row) throw conflict('already_connected');
    return this.answer(row);
  }

  async update(id: string, brandId: string, body: z.output<typeof updateConnectionBody>): Promise<ConnectionAnswer> {
    const current = await this.row(id, brandId);
    const provider = current.provider as Provider;
    const changes: Updateable<BillingConnectionsTable> = {};
    if (body.settings) {
      const stored = { ...current.settings, ...(current.sandbox_secret_encrypted ? { sandbox_secret: this.sandboxSecretOf(current) } : {}) };
      const merged = Object.fromEntries(
        Object.entries({ ...stored, ...body.settings }).filter(([, v]) => v !== null && v !== undefined),
      );
      const { settings, sandboxSecret } = splitSettings(provider, merged);
      changes.settings = JSON.stringify(settings);
      changes.sandbox_secret_encrypted = sandboxSecret ? this.box.seal(sandboxSecret, `${id}:sandbox_secret`) : null;
    }
    if (body.signing_secret !== undefined) {
      changes.signing_secret_encrypted = body.signing_secret ? this.box.seal(body.signing_secret, `${id}:signing_secret`) : null;
    }
    const row = await this.db
      .updateTable('billing_connections')
      .set({ ...changes, updated_at: new Date() })
      .where('id', '=', id)
      .where('brand_id', '=', brandId)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw notFound(); // deleted meanwhile
    return this.answer(row);
  }

  /** Deletes one connection (of this brand when `brandId` is given); unknown ids are 404. */
  async delete(id: string, brandId?: string): Promise<void> {
    let q = this.db.deleteFrom('billing_connections').where('id', '=', id);
    if (brandId !== undefined) q = q.where('brand_id', '=', brandId);
    const result = await q.executeTakeFirst();
    if (result.numDeletedRows === 0n) throw notFound();
  }

  /** Connections ordered by creation, optionally of one brand; keyset-paged after `after` (an id). */
  async list(filter: { brandId?: string; provider?: Provider; status?: ConnectionStatus; after?: string; limit: number }) {
    let q = this.db.selectFrom('billing_connections').selectAll().orderBy('created_at').orderBy('id').limit(filter.limit + 1);
    if (filter.brandId !== undefined) q = q.where('brand_id', '=', filter.brandId);
    if (filter.provider !== undefined) q = q.where('provider', '=', filter.provider);
    if (filter.status !== undefined) q = q.where('status', '=', filter.status);
    if (filter.after !== undefined) {
      const after = filter.after;
      q = q.where((eb) =>
        eb(
          eb.refTuple('created_at', 'id'),
          '>',
          eb.tuple(eb.selectFrom('billing_connections').select('created_at').where('id', '=', after), eb.val(after)),
        ),
      );
    }
    const found = await q.execute();
    return { data: found.slice(0, filter.limit).map((r) => this.answer(r)), hasMore: found.length > filter.limit };
  }

  /** The connection a webhook URL names, with its secrets opened; null when there is none. */
  async findByToken(provider: Provider, token: string): Promise<WebhookConnection | null> {
    if (!token.startsWith(TOKEN_PREFIX)) return null;
    const row = await this.db
      .selectFrom('billing_connections')
      .selectAll()
      .where('token_hash', '=', sha256(token))
      .where('provider', '=', provider)
      .executeTakeFirst();
    if (!row) return null;
    return {
      id: row.id,
      brandId: row.brand_id,
      provider,
      status: row.status,
      signingSecret: row.signing_secret_encrypted ? this.box.open(row.signing_secret_encrypted, `${row.id}:signing_secret`) : null,
      sandboxSecret: this.sandboxSecretOf(row),
      settings: row.settings,
    };
  }

  /**
   * A verified, parsed delivery proves the URL and the secret: the connection is connected
   * (from awaiting_first_event or from error). A refused one marks it error with the reason.
   */
  async recordDelivery(id: string, outcome: { ok: true; at: Date } | { ok: false; reason: string }): Promise<void> {
    const set = outcome.ok
      ? { status: 'connected' as const, last_error: null, last_event_at: outcome.at }
      : { status: 'error' as const, last_error: outcome.reason };
    await this.db.updateTable('billing_connections').set(set).where('id', '=', id).execute();
  }

  private async row(id: string, brandId?: string): Promise<Row> {
    let q = this.db.selectFrom('billing_connections').selectAll().where('id', '=', id);
    if (brandId !== undefined) q = q.where('brand_id', '=', brandId);
    const row = await q.executeTakeFirst();
    if (!row) throw notFound();
    return row;
  }

  private sandboxSecretOf(row: Row): string | null {
    return row.sandbox_secret_encrypted ? this.box.open(row.sandbox_secret_encrypted, `${row.id}:sandbox_secret`) : null;
  }

  private answer(row: Row): ConnectionAnswer {
    const token = this.box.open(row.token_encrypted, `${row.id}:token`);
    return {
      id: row.id,
      brand_id: row.brand_id,
      provider: row.provider as Provider,
      status: row.status,
      last_error: row.last_error,
      settings: row.settings,
      webhook_url: `${this.publicBaseUrl}/api/webhooks/attribution/${row.provider}/${token}`,
      last_event_at: row.last_event_at,
      signing_secret_set: row.signing_secret_encrypted !== null,
      ...(row.provider === 'adapty' ? { sandbox_secret_set: row.sandbox_secret_encrypted !== null } : {}),
      signing_secret_warning: unsignedWarning(row.provider as Provider, {
        signing: row.signing_secret_encrypted !== null,
        sandbox: row.sandbox_secret_encrypted !== null,
      }),
      created_at: row.created_at,
    };
  }
}

/**
 * Validates settings with the provider's schema (422 invalid_request on failure) and takes
 * Adapty's `sandbox_secret` out of them: it is a secret, stored encrypted, never answered.
 */
function splitSettings(provider: Provider, input: Record<string, unknown>) {
  const { sandbox_secret, ...settings } = SETTINGS_SCHEMAS[provider].parse(input);
  return { settings, sandboxSecret: typeof sandbox_secret === 'string' ? sandbox_secret : null };
}
