import { type Kysely, sql } from 'kysely';

/**
 * The outbox of installs and ledger rows becomes its own table: a pending fact is one `fact_outbox`
 * row, deleted once ClickHouse has it, so confirming no longer rewrites the accepted row and its
 * index entries (about three times the rate, docs/benchmarks.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('fact_outbox')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('recorded_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('fact_outbox_pkey', ['kind', 'id'])
    .execute();
  // The sweeper reads the oldest pending facts of a kind first.
  await db.schema.createIndex('fact_outbox_due_idx').on('fact_outbox').columns(['kind', 'recorded_at', 'id']).execute();
  await sql`INSERT INTO fact_outbox SELECT 'installs', id, recorded_at FROM installs WHERE warehoused_at IS NULL`.execute(db);
  await sql`INSERT INTO fact_outbox SELECT 'ledger', id, recorded_at FROM ledger_events WHERE warehoused_at IS NULL`.execute(db);
  for (const table of ['installs', 'ledger_events']) {
    await db.schema.alterTable(table).dropColumn('warehoused_at').execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [table, kind] of [
    ['installs', 'installs'],
    ['ledger_events', 'ledger'],
  ] as const) {
    await db.schema.alterTable(table).addColumn('warehoused_at', 'timestamptz').execute();
    await sql`UPDATE ${sql.table(table)} t SET warehoused_at = t.recorded_at
      WHERE NOT EXISTS (SELECT 1 FROM fact_outbox o WHERE o.kind = ${kind} AND o.id = t.id)`.execute(db);
    await sql`CREATE INDEX ${sql.id(`${table}_unwarehoused_idx`)} ON ${sql.table(table)} (recorded_at) WHERE warehoused_at IS NULL`.execute(db);
  }
  await db.schema.dropTable('fact_outbox').execute();
}
