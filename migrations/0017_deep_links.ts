import { type Kysely, sql } from 'kysely';

/**
 * Deep links (docs/link-host.md, docs/api.md): a link's `deep_link`, the one an install was
 * answered (kept with the install, so a retry answers the same), a brand's app identifiers for
 * the association files, and the opens an installed app reports, kept in Postgres so a purchase
 * recorded a moment later finds its open exactly.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('links').addColumn('deep_link', 'text').execute();
  await db.schema.alterTable('installs').addColumn('deep_link', 'text').execute();

  await db.schema
    .createTable('brand_apps')
    .addColumn('brand_id', 'text', (c) => c.primaryKey().references('brands.id').onDelete('cascade'))
    .addColumn('ios_team_id', 'text')
    .addColumn('ios_bundle_id', 'text')
    .addColumn('android_package', 'text')
    .addColumn('android_fingerprints', sql`text[]`)
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('link_opens')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('brand_id', 'text', (c) => c.notNull().references('brands.id').onDelete('cascade'))
    .addColumn('install_id', 'text', (c) => c.notNull())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('link_id', 'bigint', (c) => c.notNull())
    .addColumn('click_token', 'text', (c) => c.notNull())
    .addColumn('opened_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // The credit look-up: this brand's opens by one install id, latest first within a window.
  await db.schema.createIndex('link_opens_install_idx').on('link_opens').columns(['brand_id', 'install_id', 'opened_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('link_opens').ifExists().execute();
  await db.schema.dropTable('brand_apps').ifExists().execute();
  await db.schema.alterTable('installs').dropColumn('deep_link').execute();
  await db.schema.alterTable('links').dropColumn('deep_link').execute();
}
