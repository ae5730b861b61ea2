import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrationDatabase } from '../helpers/migration-database';

/**
 * Migration 0007 moves pending facts from the `warehoused_at` column to `fact_outbox`: on a
 * database that already holds installs and ledger rows, the unconfirmed ones (and only
 * those) must stay pending, and going down must give them back their state.
 */
const { db: database, migrateTo } = migrationDatabase('migration');

describe('migration 0007: fact_outbox', () => {
  it('keeps exactly the unconfirmed installs and ledger rows pending, and gives them back going down', async () => {
    await migrateTo('0006_link_change_notifications');
    await sql`INSERT INTO brands (id, name, default_platforms, pixel_key) VALUES ('b1', 'Acme', '{}', 'pk_1')`.execute(database());
    await sql`
      INSERT INTO installs (id, brand_id, install_id, platform, attributed, resolution_method, occurred_at, recorded_at, warehoused_at) VALUES
        ('i-done', 'b1', 'device-1', 'ios', false, 'unattributed', now(), now() - interval '2 hours', now() - interval '2 hours'),
        ('i-pending', 'b1', 'device-2', 'ios', false, 'unattributed', now(), now() - interval '1 hour', NULL)`.execute(database());
    await sql`
      INSERT INTO ledger_events (id, brand_id, event_type, transaction_id, amount, currency, source, resolution_method, occurred_at, warehoused_at) VALUES
        ('l-done', 'b1', 'purchase', 'tx-1', 10, 'USD', 'pixel', 'unattributed', now(), now()),
        ('l-pending', 'b1', 'purchase', 'tx-2', 20, 'USD', 'pixel', 'unattributed', now(), NULL)`.execute(database());

    await migrateTo('0007_fact_outbox');
    const pending = await sql<{ kind: string; id: string }>`SELECT kind, id FROM fact_outbox ORDER BY kind, id`.execute(database());
    expect(pending.rows).toEqual([
      { kind: 'installs', id: 'i-pending' },
      { kind: 'ledger', id: 'l-pending' },
    ]);
    const columns = await sql<{ table_name: string }>`
      SELECT table_name FROM information_schema.columns WHERE column_name = 'warehoused_at'`.execute(database());
    expect(columns.rows).toEqual([]);

    await migrateTo('0006_link_change_notifications');
    const states = await sql<{ id: string; confirmed: boolean }>`
      SELECT id, warehoused_at IS NOT NULL AS confirmed FROM installs
      UNION ALL SELECT id, warehoused_at IS NOT NULL FROM ledger_events ORDER BY id`.execute(database());
    expect(states.rows).toEqual([
      { id: 'i-done', confirmed: true },
      { id: 'i-pending', confirmed: false },
      { id: 'l-done', confirmed: true },
      { id: 'l-pending', confirmed: false },
    ]);
  });
});
