import type { Kysely } from 'kysely';

/**
 * Opens older than the credit window are deleted periodically (docs/operations.md, "Link opens");
 * this index lets each bounded delete find them without scanning the table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('link_opens_opened_at_idx').on('link_opens').column('opened_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('link_opens_opened_at_idx').ifExists().execute();
}
