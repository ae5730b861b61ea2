import type { Db } from '../../db/database';
import type { LedgerReference, MapContext } from './connector';

/** How many references a refund follows (payment intent → invoice → Checkout session). */
const MAX_REFERENCE_HOPS = 3;

/**
 * The brand's ledger as the connectors see it while mapping (`MapContext`), plus the
 * `billing_references` the route stores after mapping and follows before recording refunds.
 */
export class BrandLedgerView {
  constructor(
    private readonly db: Db,
    private readonly brandId: string,
  ) {}

  context<Settings>(settings: Settings): MapContext<Settings> {
    return {
      settings,
      hasLedgerRow: async (eventType, transactionId) => {
        const row = await this.db
          .selectFrom('ledger_events')
          .select('id')
          .where('brand_id', '=', this.brandId)
          .where('event_type', '=', eventType)
          .where('transaction_id', '=', transactionId)
          // A provider's own row: a public one (pixel, SDK) never decides how a verified event maps.
          .where('verified', '=', true)
          .executeTakeFirst();
        return row !== undefined;
      },
      reference: async (key) => {
        const row = await this.db
          .selectFrom('billing_references')
          .select('transaction_id')
          .where('brand_id', '=', this.brandId)
          .where('reference', '=', key)
          .executeTakeFirst();
        return row?.transaction_id ?? null;
      },
      firstActiveCode: async (codes) => {
        const wanted = codes.map((c) => c.trim().toUpperCase()).filter(Boolean);
        if (wanted.length === 0) return null;
        const active = await this.db
          .selectFrom('creator_codes')
          .select('label')
          .where('brand_id', '=', this.brandId)
          .where('active', '=', true)
          .where((eb) => eb(eb.fn('upper', ['label']), 'in', wanted))
          .execute();
        const labels = new Set(active.map((a) => a.label.toUpperCase()));
        return wanted.find((c) => labels.has(c)) ?? null;
      },
    };
  }

  /** Stores references; the first one stored for a key wins (redeliveries change nothing). */
  async remember(references: LedgerReference[]): Promise<void> {
    if (references.length === 0) return;
    await this.db
      .insertInto('billing_references')
      .values(references.map((r) => ({ brand_id: this.brandId, reference: r.key, transaction_id: r.transactionId })))
      .onConflict((oc) => oc.columns(['brand_id', 'reference']).doNothing())
      .execute();
  }

  /** The keys followed through the stored references, the given ones first. */
  async follow(keys: string[]): Promise<string[]> {
    const all = [...keys];
    let frontier = keys;
    for (let hop = 0; hop < MAX_REFERENCE_HOPS && frontier.length > 0; hop++) {
      const found = await this.db
        .selectFrom('billing_references')
        .select('transaction_id')
        .where('brand_id', '=', this.brandId)
        .where('reference', 'in', frontier)
        .execute();
      frontier = [...new Set(found.map((f) => f.transaction_id))].filter((t) => !all.includes(t));
      all.push(...frontier);
    }
    return all;
  }
}
