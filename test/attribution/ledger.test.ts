import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedger, type Ledger } from '../../src/attribution/ledger/record';
import type { LedgerDraft } from '../../src/attribution/ledger/types';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { type AttributionBrand, attributionBrand, click, uniqueId } from './public/setup';

/** The ledger as the billing webhook connectors use it (RecordLedgerEvent). */
let t: TestService;
let acme: AttributionBrand;
let ledger: Ledger;
beforeAll(async () => {
  t = await startTestService();
  acme = await attributionBrand(t, 'Acme');
  ledger = createLedger(t.services);
});
afterAll(async () => destroyTestService(t));

const draft = (over: Partial<LedgerDraft>): LedgerDraft => ({
  eventType: 'purchase',
  transactionId: uniqueId('apple'),
  externalUserId: null,
  amount: 9.99,
  currency: 'USD',
  source: 'revenuecat',
  clickToken: null,
  code: null,
  sandbox: false,
  occurredAt: new Date('2026-11-20T10:00:00Z'),
  ...over,
});

const row = (id: string) => t.services.db.selectFrom('ledger_events').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('Ledger.record (webhook connectors)', () => {
  it('answers the recorded id, and the same id with duplicate: true for a retry', async () => {
    const d = draft({});
    const first = await ledger.record(acme.brand.id, d);
    expect(first.duplicate).toBe(false);
    expect(await ledger.record(acme.brand.id, d)).toEqual({ id: first.id, duplicate: true });
  });

  it('keeps the sandbox marker of providers, never of the pixel or the SDK', async () => {
    const provider = await ledger.record(acme.brand.id, draft({ sandbox: true }));
    expect((await row(provider.id)).sandbox).toBe(true);
    const sdk = await ledger.record(acme.brand.id, draft({ source: 'sdk', sandbox: true }));
    expect((await row(sdk.id)).sandbox).toBe(false);
  });

  it('records trials at 0 and refunds negative, copying the attribution of the transaction named in refundOf', async () => {
    const trial = await ledger.record(acme.brand.id, draft({ eventType: 'trial', amount: 4.99 }));
    expect(Number((await row(trial.id)).amount)).toBe(0);

    const token = await click(t, { domain: acme.hostname, slug: 'maya' });
    const original = uniqueId('apple');
    await ledger.record(acme.brand.id, draft({ transactionId: original, clickToken: token }));
    const refund = await ledger.record(acme.brand.id, draft({ eventType: 'refund', transactionId: uniqueId('apple'), refundOf: [original], amount: 9.99 }));
    expect(await row(refund.id)).toMatchObject({ amount: '-9.9900', link_id: acme.web.id, creator_id: acme.creator.id, resolution_method: 'click' });
  });

  it('never deduplicates an event without a transaction id', async () => {
    const a = await ledger.record(acme.brand.id, draft({ transactionId: null, eventType: 'lead' }));
    const b = await ledger.record(acme.brand.id, draft({ transactionId: null, eventType: 'lead' }));
    expect(a.duplicate || b.duplicate).toBe(false);
    expect(a.id).not.toBe(b.id);
  });

  it('refuses an amount beyond 1,000,000,000 or a transaction id over 128 characters, alone (never cut)', async () => {
    await expect(ledger.record(acme.brand.id, draft({ amount: 1e15 }))).rejects.toThrow(RangeError);
    await expect(ledger.record(acme.brand.id, draft({ amount: 1_000_000_000.01 }))).rejects.toThrow(RangeError);
    await expect(ledger.record(acme.brand.id, draft({ amount: Number.NaN }))).rejects.toThrow(RangeError);
    await expect(ledger.record(acme.brand.id, draft({ transactionId: 'x'.repeat(129) }))).rejects.toThrow(RangeError);
  });

  it('a public and a verified row of one key accepted at the same instant by two processes: exactly one counts', async () => {
    // Two ledgers: two accepting statements in flight at once, as two processes would run them.
    const other = createLedger(t.services);
    const keys = Array.from({ length: 40 }, () => uniqueId('race'));
    await Promise.all(
      keys.flatMap((transactionId, i) => {
        const [publicLedger, verifiedLedger] = i % 2 ? [ledger, other] : [other, ledger];
        return [
          publicLedger.record(acme.brand.id, draft({ transactionId, source: 'pixel' })),
          verifiedLedger.record(acme.brand.id, draft({ transactionId, source: 'stripe' })),
        ];
      }),
    );
    const rows = await t.services.db
      .selectFrom('ledger_events')
      .select(['id', 'transaction_id', 'verified', 'supersedes'])
      .where('transaction_id', 'in', keys)
      .execute();
    for (const key of keys) {
      const ofKey = rows.filter((r) => r.transaction_id === key);
      const verified = ofKey.find((r) => r.verified);
      const claimed = ofKey.find((r) => !r.verified);
      expect(verified, key).toBeDefined();
      // Either the public row came first and the verified one names it, or it was a duplicate.
      expect(verified!.supersedes, key).toBe(claimed?.id ?? null);
    }
  });

  it('writes each recorded row to ClickHouse once and takes it out of the outbox', async () => {
    const recorded = await ledger.record(acme.brand.id, draft({ currency: 'GBP', amount: 12.5 }));
    const outbox = () => t.services.db.selectFrom('fact_outbox').select(['kind', 'id']).where('id', '=', recorded.id).execute();
    // Committed with the row, pending until the worker's batch is in ClickHouse (workers gather for 500 ms).
    expect(await outbox()).toEqual([{ kind: 'ledger', id: recorded.id }]);
    await t.settle();
    const rows = await t.services.warehouse.rows<{ amount: number; currency: string }>('SELECT amount, currency FROM ledger WHERE id = {id:String}', {
      id: recorded.id,
    });
    expect(rows).toEqual([{ amount: 12.5, currency: 'GBP' }]);
    expect(await outbox()).toEqual([]);
  });
});
