import { type Kysely, sql } from 'kysely';
import { down as dropAnyRecordChange, up as notifyAnyRecordChange } from './0010_record_changes';

/**
 * record_changes names the brands a statement changed (`records <id>,<id>`), not only that one
 * did: a link created for one brand no longer drops every brand's cached answers. Shared records
 * (creators, shared domains), a TRUNCATE and a statement over more than 100 brands (or ids too long
 * for a notification) say `records *`. A new creator names nothing cached until a link or code does.
 */
/** Each table and the column naming a row's brand; '' when its rows are shared by every brand. */
const TABLES: [string, string][] = [
  ['brands', 'id'],
  ['campaigns', 'brand_id'],
  ['creators', ''],
  ['links', 'brand_id'],
  ['domains', 'brand_id'],
  ['creator_codes', 'brand_id'],
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await dropAnyRecordChange(db);
  // The brands come from the statement's transition tables (old_rows, new_rows), by the column TG_ARGV[0] names.
  await sql`
    CREATE FUNCTION notify_brand_record_changes() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      brand_column text := TG_ARGV[0];
      brands text[];
    BEGIN
      IF brand_column = '' OR TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('record_changes', 'records *');
        RETURN NULL;
      END IF;
      IF TG_LEVEL = 'ROW' THEN
        SELECT array_agg(DISTINCT b) INTO brands FROM unnest(ARRAY[OLD.brand_id::text, NEW.brand_id::text]) AS b;
      ELSIF TG_OP = 'INSERT' THEN
        EXECUTE format('SELECT array_agg(DISTINCT %I::text) FROM new_rows', brand_column) INTO brands;
      ELSIF TG_OP = 'DELETE' THEN
        EXECUTE format('SELECT array_agg(DISTINCT %I::text) FROM old_rows', brand_column) INTO brands;
      ELSE
        EXECUTE format('SELECT array_agg(DISTINCT b) FROM (SELECT %1$I::text AS b FROM old_rows UNION ALL SELECT %1$I::text FROM new_rows) AS changed', brand_column) INTO brands;
      END IF;
      IF brands IS NULL THEN
        RETURN NULL; -- the statement changed no row
      ELSIF array_position(brands, NULL) IS NOT NULL OR cardinality(brands) > 100
            OR octet_length(array_to_string(brands, ',')) > 7900 THEN
        PERFORM pg_notify('record_changes', 'records *');
      ELSE
        PERFORM pg_notify('record_changes', 'records ' || array_to_string(brands, ','));
      END IF;
      RETURN NULL;
    END $$`.execute(db);
  for (const [table, brandColumn] of TABLES) {
    const trigger = (event: string) => sql.id(`${table}_record_${event}`);
    const notify = sql`EXECUTE FUNCTION notify_brand_record_changes(${sql.lit(brandColumn)})`;
    if (brandColumn === '') {
      await sql`CREATE TRIGGER ${trigger('changes')} AFTER UPDATE OR DELETE OR TRUNCATE ON ${sql.table(table)} FOR EACH STATEMENT ${notify}`.execute(db);
      continue;
    }
    await sql`CREATE TRIGGER ${trigger('inserts')} AFTER INSERT ON ${sql.table(table)} REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT ${notify}`.execute(db);
    await sql`CREATE TRIGGER ${trigger('deletes')} AFTER DELETE ON ${sql.table(table)} REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT ${notify}`.execute(db);
    await sql`CREATE TRIGGER ${trigger('truncates')} AFTER TRUNCATE ON ${sql.table(table)} FOR EACH STATEMENT ${notify}`.execute(db);
    if (table === 'creator_codes') {
      // Every accepted install and event moves a code's credited_count, which no answer names; transition tables take no column list.
      await sql`CREATE TRIGGER ${trigger('updates')} AFTER UPDATE OF brand_id, creator_id, label, active ON ${sql.table(table)} FOR EACH ROW ${notify}`.execute(db);
    } else {
      await sql`CREATE TRIGGER ${trigger('updates')} AFTER UPDATE ON ${sql.table(table)} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT ${notify}`.execute(db);
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [table, brandColumn] of TABLES) {
    const events = brandColumn === '' ? ['changes'] : ['inserts', 'updates', 'deletes', 'truncates'];
    for (const event of events) await sql`DROP TRIGGER IF EXISTS ${sql.id(`${table}_record_${event}`)} ON ${sql.table(table)}`.execute(db);
  }
  await sql`DROP FUNCTION IF EXISTS notify_brand_record_changes()`.execute(db);
  await notifyAnyRecordChange(db);
}
