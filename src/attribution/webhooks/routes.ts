import type { FastifyInstance, FastifyRequest } from 'fastify';
import { attributionErrorHandler } from '../../http/errors';
import { type Gate, mountRoutes, route } from '../../http/route';
import type { Config } from '../../config';
import type { Db } from '../../db/database';
import { isStorableValue } from '../../storable-text';
import { isRecordableDraft, type LedgerDraft, PROVIDERS, type Provider, type RecordLedgerEvent } from '../ledger/types';
import { Refusal, refuse } from '../../refusal';
import { Connections, type WebhookConnection } from './connections';
import { type Delivery, type Mapped, unparseable } from './connector';
import { BrandLedgerView } from './map-context';
import { createConnectors } from './providers';

declare module '../../http/route' {
  interface Callers {
    /** The billing connection a webhook URL's token names (auth 'webhook_token'). */
    webhook_token: { provider: Provider; connection: WebhookConnection };
  }
}

/** The gate of auth 'webhook_token', once the body is read: the connection the URL names, or 404 unknown_connection. */
function webhookTokenGate(connections: Connections): Gate<'webhook_token'> {
  return {
    at: 'handler',
    async resolve(req: FastifyRequest) {
      const { provider, token } = req.params as { provider: string; token: string };
      const known = PROVIDERS.find((p) => p === provider);
      const connection = known ? await connections.findByToken(known, token) : null;
      if (!known || !connection) throw refuse(404, 'unknown_connection');
      return { provider: known, connection };
    },
  };
}

/**
 * POST /api/webhooks/attribution/:provider/:token (docs/webhooks.md): connection (404) → authenticate (401)
 * → parse (422) → map → record → 200 {ok, recorded, ignored}, in that order (docs/webhooks.md). A
 * 401 or 422 marks the connection `error`, a 200 `connected` (docs/webhooks.md).
 */
export type WebhookDeps = Pick<Config, 'secretKey' | 'publicBaseUrl' | 'testAppleRootCa'> & { db: Db; recordLedgerEvent: RecordLedgerEvent };

export async function webhookRoutes(app: FastifyInstance, deps: WebhookDeps) {
  const { db, recordLedgerEvent } = deps;
  const connections = new Connections(db, deps.secretKey, deps.publicBaseUrl);
  const connectors = createConnectors(deps);

  app.setErrorHandler(attributionErrorHandler);
  // Signatures cover the exact bytes sent: keep every body as a Buffer, whatever its type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  // 1. The connection the URL names (the gate), then the steps below.
  const receive = route({
    method: 'POST',
    path: '/:provider/:token',
    auth: 'webhook_token',
    summary: "Receive a billing provider's webhook delivery",
    responses: { 200: { description: '{ok, recorded, ignored}' } },
    handler: async ({ req }, { provider, connection }) => {
      const connector = connectors[provider];
      const delivery: Delivery = {
        body: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
        headers: req.headers,
        receivedAt: new Date(),
      };
      const ledger = new BrandLedgerView(db, connection.brandId);
      let mapped: Mapped[];
      try {
        // Settings are validated when saved; a stored value that no longer passes (a connector
        // that became stricter) is the connection's error to report, like any other refusal.
        const stored = connector.settingsSchema.safeParse(connection.settings);
        if (!stored.success) throw unparseable('invalid_connection_settings');
        const settings = stored.data;
        const { signingSecret, sandboxSecret } = connection;
        // 2. Authenticate (401), 3. parse (422), 4. map every event before recording any.
        const verified = await connector.authenticate(delivery, { signingSecret, sandboxSecret, settings });
        const events = connector.parse(verified, delivery);
        // Text no store can hold (NUL, a lone surrogate) anywhere in the events: refused before any look-up reads it.
        if (!isStorableValue(events)) throw unparseable('unrecordable_values');
        const context = ledger.context(settings);
        mapped = [];
        for (const event of events) mapped.push(await connector.map(event, context));
        // A row the ledger cannot store (date, amount) fails the whole delivery as unparseable, before anything is recorded.
        if (!mapped.every((event) => event.rows.every(isRecordableDraft))) throw unparseable('unrecordable_values');
      } catch (err) {
        if (!(err instanceof Refusal)) throw err;
        await connections.recordDelivery(connection.id, { ok: false, reason: err.code });
        req.log.warn({ provider, connection: connection.id, reason: err.code }, 'billing webhook refused');
        throw err; // answered {"error": code} with its status, as every refusal
      }

      // 5. Record each row through the ledger; duplicates count as ignored.
      let recorded = 0;
      let ignored = 0;
      for (const event of mapped) {
        await ledger.remember(event.references ?? []);
        if (event.rows.length === 0) {
          ignored++;
          req.log.debug({ provider, connection: connection.id, because: event.ignoredBecause }, 'billing event ignored');
        }
        for (const draft of event.rows) {
          const { duplicate } = await recordLedgerEvent(connection.brandId, await withRefundTargets(ledger, draft));
          if (duplicate) ignored++;
          else recorded++;
        }
      }
      await connections.recordDelivery(connection.id, { ok: true, at: delivery.receivedAt });
      return { ok: true, recorded, ignored };
    },
  });
  mountRoutes(app, [receive], { gates: { webhook_token: webhookTokenGate(connections) }, queryErrors: 'invalid_request' });
}

/** A refund's targets extended through the stored references (e.g. payment intent → Checkout session). */
async function withRefundTargets(ledger: BrandLedgerView, draft: LedgerDraft): Promise<LedgerDraft> {
  if (draft.eventType !== 'refund') return draft;
  const targets = draft.refundOf ?? (draft.transactionId ? [draft.transactionId] : []);
  return { ...draft, refundOf: await ledger.follow(targets) };
}
