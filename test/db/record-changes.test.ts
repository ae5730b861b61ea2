import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/database';
import { migratePostgres } from '../../src/db/migrate';
import { eventually, ownDatabase } from '../helpers/harness';

/**
 * Each statement on a record cached answers name notifies `record_changes` with the brands it
 * changed (migrations/0011), so a change of one brand's records drops that brand's answers only.
 */
const DATABASE_URL = ownDatabase('recordchanges');
let admin: pg.Client;
let listener: pg.Client;
const received: string[] = [];

beforeAll(async () => {
  const db = createDb(DATABASE_URL, 1);
  await migratePostgres(db).finally(() => db.destroy());
  admin = new pg.Client({ connectionString: DATABASE_URL });
  listener = new pg.Client({ connectionString: DATABASE_URL });
  await Promise.all([admin.connect(), listener.connect()]);
  listener.on('notification', (n) => received.push(n.payload ?? ''));
  await listener.query('LISTEN record_changes');
  await admin.query(`
    INSERT INTO brands (id, name, default_platforms, pixel_key) VALUES ('A', 'A', '{tiktok}', 'pk_a'), ('B', 'B', '{tiktok}', 'pk_b'), ('C', 'C', '{tiktok}', 'pk_c');
    INSERT INTO creators (id, name) VALUES ('maya', 'Maya');
    INSERT INTO domains (id, hostname, brand_id, verification_token) VALUES ('dA', 'a.test', 'A', 't'), ('dB', 'b.test', 'B', 't');
    INSERT INTO links (brand_id, creator_id, domain_id, slug, type, destination_url) VALUES ('A', 'maya', 'dA', 'x', 'web', 'https://a.test/'), ('B', 'maya', 'dB', 'x', 'web', 'https://b.test/');
    INSERT INTO creator_codes (id, brand_id, creator_id, label) VALUES ('cA', 'A', 'maya', 'MAYA10');`);
  await notices('SELECT 1'); // the set-up's own notices are in
});
afterAll(async () => {
  await Promise.all([admin?.end(), listener?.end()]);
});

/** The notifications `statement` sends, brand lists sorted; a marker after it shows all of them are in. */
async function notices(statement: string): Promise<string[]> {
  received.length = 0;
  await admin.query(statement);
  await admin.query(`SELECT pg_notify('record_changes', 'done')`);
  await eventually(async () => received.at(-1), (last) => last === 'done', 5_000);
  return received.slice(0, -1).map((p) => p.replace(/ (.*)$/, (_, ids: string) => ` ${ids.split(',').sort().join(',')}`));
}

describe('record_changes', () => {
  it('names the brands a statement changed', async () => {
    expect(await notices(`INSERT INTO campaigns (id, brand_id, name, status) VALUES ('c1', 'A', 'Spring', 'active')`)).toEqual(['records A']);
    expect(await notices(`UPDATE links SET active = false`)).toEqual(['records A,B']);
    expect(await notices(`UPDATE links SET brand_id = 'C' WHERE brand_id = 'B'`)).toEqual(['records B,C']);
    expect(await notices(`DELETE FROM campaigns WHERE id = 'c1'`)).toEqual(['records A']);
    expect(await notices(`UPDATE brands SET name = 'A2' WHERE id = 'A'`)).toEqual(['records A']);
    expect(await notices(`UPDATE creator_codes SET active = false`)).toEqual(['records A']);
  });

  it('says every brand for shared records, and nothing for a statement that changed no row or only a count', async () => {
    expect(await notices(`INSERT INTO domains (id, hostname, brand_id, verification_token) VALUES ('shared', 'go.test', NULL, 't')`)).toEqual(['records *']);
    expect(await notices(`UPDATE creators SET name = 'Maya L'`)).toEqual(['records *']);
    expect(await notices(`INSERT INTO creators (id, name) VALUES ('sam', 'Sam')`)).toEqual([]);
    expect(await notices(`TRUNCATE creator_codes`)).toEqual(['records *']);
    expect(await notices(`UPDATE links SET active = true WHERE brand_id = 'nobody'`)).toEqual([]);
    expect(await notices(`UPDATE creator_codes SET credited_count = credited_count + 1`)).toEqual([]);
    expect(await notices(`INSERT INTO brands (id, name, default_platforms, pixel_key) SELECT 'b' || i, 'b', '{tiktok}', 'pk_b' || i FROM generate_series(1, 101) AS i`)).toEqual(['records *']);
    const longIds = `SELECT 'long-' || repeat('x', 200) || i, 'l', '{tiktok}', 'pk_l' || i FROM generate_series(1, 50) AS i`;
    expect(await notices(`INSERT INTO brands (id, name, default_platforms, pixel_key) ${longIds}`)).toEqual(['records *']);
  });
});
