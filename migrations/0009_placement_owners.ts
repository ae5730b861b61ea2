import type { Kysely } from 'kysely';

/**
 * The brand each placement id belongs to (docs/hardening.md#a-placement-id-belongs-to-one-brand). Snapshots are keyed by placement id
 * only, so an id under two brands would show one brand's metrics to the other. Its primary key
 * decides the first claim under concurrent requests (src/placements/intake.ts).
 * Placements delivered before this table are claimed by their next delivery.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('placement_owners')
    .addColumn('placement_id', 'text', (c) => c.primaryKey())
    .addColumn('brand_id', 'text', (c) => c.notNull().references('brands.id').onDelete('cascade'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('placement_owners').execute();
}
