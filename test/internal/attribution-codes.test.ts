import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstFreeLabel, labelBase } from '../../src/attribution/codes/labels';
import { codeTotals } from '../../src/attribution/reporting/totals';
import { chDateTime } from '../../src/warehouse/values';
import { type CodeItem, createCode } from '../helpers/attribution-fixtures';
import { createBrand, createCreator } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

let t: TestService;
let brand: { id: string };
let maya: { id: string; name: string };
beforeAll(async () => {
  t = await startTestService({ workers: false });
  brand = await createBrand(t, { name: 'Acme' });
  maya = await createCreator(t, { name: 'Maya Lopez', first_name: 'Maya' });
});
afterAll(async () => destroyTestService(t));

const url = '/api/internal/attribution-codes';
const post = (payload: Record<string, unknown>) => t.request({ method: 'POST', url, admin: true, payload });
const patch = (id: string, payload: Record<string, unknown>) => t.request({ method: 'PATCH', url: `${url}/${id}`, admin: true, payload });
const remove = (id: string) => t.request({ method: 'DELETE', url: `${url}/${id}`, admin: true });

describe('internal attribution codes', () => {
  it('needs the admin JWT', async () => {
    expect((await t.request({ method: 'GET', url })).statusCode).toBe(401);
    expect((await t.request({ method: 'POST', url, payload: { brand_id: brand.id, creator_id: maya.id } })).statusCode).toBe(401);
    expect((await t.request({ method: 'DELETE', url: `${url}/x` })).statusCode).toBe(401);
  });

  it("generates labels from the creator's first name, upper-case, MAYA, MAYA2, MAYA3 per brand", async () => {
    const first = await createCode(t, { brand_id: brand.id, creator_id: maya.id });
    expect(first).toMatchObject({
      brand_id: brand.id,
      label: 'MAYA',
      active: true,
      creator: { id: maya.id, name: 'Maya Lopez' },
      credited_count: 0,
      conversions: 0,
      revenue: {},
    });
    expect(typeof first.id).toBe('string');
    const other = await createCreator(t, { name: 'Maya Chen' }); // no first_name: the first word of the name
    expect((await createCode(t, { brand_id: brand.id, creator_id: other.id })).label).toBe('MAYA2');
    expect((await createCode(t, { brand_id: brand.id, creator_id: maya.id })).label).toBe('MAYA3');
    const elsewhere = await createBrand(t, { name: 'Elsewhere' });
    expect((await createCode(t, { brand_id: elsewhere.id, creator_id: maya.id })).label).toBe('MAYA');
  });

  it('keeps generated labels unique under concurrent creation', async () => {
    const b = await createBrand(t);
    const labels = await Promise.all(Array.from({ length: 5 }, () => createCode(t, { brand_id: b.id, creator_id: maya.id }).then((c) => c.label)));
    expect(labels.sort()).toEqual(['MAYA', 'MAYA2', 'MAYA3', 'MAYA4', 'MAYA5']);
  });

  it('folds names to letters and digits', () => {
    expect(labelBase({ first_name: 'José-Luis', name: 'x' })).toBe('JOSELUIS');
    expect(labelBase({ first_name: null, name: "  d'Angelo Smith" })).toBe('DANGELO');
    expect(labelBase({ first_name: '  ', name: 'Zoë Q' })).toBe('ZOE');
    expect(labelBase({ first_name: '李', name: '李小龙' })).toBe('CODE');
    expect(labelBase({ first_name: 'A'.repeat(40), name: 'x' })).toBe('A'.repeat(24));
    expect(firstFreeLabel('ANA', new Set(['ANA', 'ANA3']))).toBe('ANA2');
  });

  it('fills the first free suffix and skips dictated labels that look generated', async () => {
    const b = await createBrand(t);
    const ana = await createCreator(t, { name: 'Ana Ruiz', first_name: 'Ana' });
    const a1 = await createCode(t, { brand_id: b.id, creator_id: ana.id });
    const a2 = await createCode(t, { brand_id: b.id, creator_id: ana.id });
    await createCode(t, { brand_id: b.id, creator_id: ana.id, label: 'ana3' });
    expect([a1.label, a2.label]).toEqual(['ANA', 'ANA2']);
    expect((await createCode(t, { brand_id: b.id, creator_id: ana.id })).label).toBe('ANA4');
    expect((await remove(a2.id)).statusCode).toBe(204);
    expect((await createCode(t, { brand_id: b.id, creator_id: ana.id })).label).toBe('ANA2');
  });

  it('upper-cases dictated labels and keeps them unique per brand (409 label_taken)', async () => {
    const b = await createBrand(t);
    expect((await createCode(t, { brand_id: b.id, creator_id: maya.id, label: ' summer-10 ' })).label).toBe('SUMMER-10');
    const dup = await post({ brand_id: b.id, creator_id: maya.id, label: 'Summer-10' });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toEqual({ error: 'label_taken' });
    for (const label of ['has space', 'ÉTÉ', '', 'X'.repeat(33), 'a.b']) {
      const res = await post({ brand_id: b.id, creator_id: maya.id, label });
      expect(res.statusCode, label).toBe(422);
      expect(res.json().error).toBe('invalid_request');
    }
    const unknown = await post({ brand_id: 'nope', creator_id: 'nope' });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().details.map((d: { path: string }) => d.path)).toEqual(['brand_id', 'creator_id']);
  });

  it('renames, deactivates and reactivates; 409 for a label taken, 404 for unknown ids', async () => {
    const b = await createBrand(t);
    const code = await createCode(t, { brand_id: b.id, creator_id: maya.id, label: 'ONE' });
    await createCode(t, { brand_id: b.id, creator_id: maya.id, label: 'TWO' });
    const renamed = await patch(code.id, { label: 'first' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({ id: code.id, label: 'FIRST', active: true });
    expect((await patch(code.id, { label: 'FIRST' })).statusCode).toBe(200);
    const taken = await patch(code.id, { label: 'two' });
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toEqual({ error: 'label_taken' });
    expect((await patch(code.id, { active: false })).json()).toMatchObject({ label: 'FIRST', active: false });
    expect((await patch(code.id, { active: true })).json()).toMatchObject({ active: true });
    for (const body of [{}, { label: 'bad label' }, { active: 'no' }]) expect((await patch(code.id, body)).statusCode).toBe(422);
    for (const res of [await patch('nope', { active: false }), await remove('nope'), await t.request({ method: 'GET', url: `${url}/nope`, admin: true })]) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'not_found' });
    }
  });

  it('deletes an unused code (204) and refuses a credited one (409 code_in_use)', async () => {
    const b = await createBrand(t);
    const { db } = t.services;
    const unused = await createCode(t, { brand_id: b.id, creator_id: maya.id, label: 'UNUSED' });
    expect((await remove(unused.id)).statusCode).toBe(204);
    expect((await remove(unused.id)).statusCode).toBe(404);

    const counted = await createCode(t, { brand_id: b.id, creator_id: maya.id, label: 'COUNTED' });
    await db.updateTable('creator_codes').set({ credited_count: 1 }).where('id', '=', counted.id).execute();
    const inLedger = await createCode(t, { brand_id: b.id, creator_id: maya.id, label: 'LEDGER' });
    await db
      .insertInto('ledger_events')
      .values({
        id: randomUUID(),
        brand_id: b.id,
        event_type: 'purchase',
        transaction_id: 'tx-1',
        amount: 10,
        currency: 'USD',
        source: 'pixel',
        code_id: inLedger.id,
        code_label: 'LEDGER',
        resolution_method: 'code',
        occurred_at: new Date(),
      })
      .execute();
    const inInstalls = await createCode(t, { brand_id: b.id, creator_id: maya.id, label: 'INSTALL' });
    await db
      .insertInto('installs')
      .values({
        id: randomUUID(),
        brand_id: b.id,
        install_id: 'device-1',
        platform: 'ios',
        attributed: true,
        resolution_method: 'code',
        code_id: inInstalls.id,
        code_label: 'INSTALL',
        occurred_at: new Date(),
        link_id: null,
        confidence: 0.9,
        creator_id: maya.id,
        app_version: null,
      })
      .execute();
    for (const code of [counted, inLedger, inInstalls]) {
      const res = await remove(code.id);
      expect(res.statusCode, code.label).toBe(409);
      expect(res.json()).toEqual({ error: 'code_in_use' });
    }
    expect((await t.request({ method: 'GET', url: `${url}/${counted.id}`, admin: true })).json()).toMatchObject({ credited_count: 1 });
  });

  it('lists codes filtered by brand and creator, by label, paged', async () => {
    const b = await createBrand(t);
    const lena = await createCreator(t, { name: 'Lena' });
    const c = await createCode(t, { brand_id: b.id, creator_id: lena.id, label: 'C' });
    const a = await createCode(t, { brand_id: b.id, creator_id: lena.id, label: 'A' });
    const mine = await createCode(t, { brand_id: b.id, creator_id: maya.id, label: 'B' });
    const elsewhere = await createBrand(t);
    await createCode(t, { brand_id: elsewhere.id, creator_id: lena.id, label: 'Z' });

    const byBrand = (await t.request({ method: 'GET', url, admin: true, query: { brand_id: b.id } })).json();
    expect(byBrand).toEqual({ data: [a, mine, c], pagination: { next_cursor: null, has_more: false } });
    const byBoth = (await t.request({ method: 'GET', url, admin: true, query: { brand_id: b.id, creator_id: lena.id } })).json();
    expect(byBoth.data.map((x: CodeItem) => x.label)).toEqual(['A', 'C']);
    const byCreator = (await t.request({ method: 'GET', url, admin: true, query: { creator_id: lena.id } })).json();
    expect(byCreator.data.map((x: CodeItem) => x.label).sort()).toEqual(['A', 'C', 'Z']);

    const labels: string[] = [];
    let cursor: string | null = null;
    do {
      const query: Record<string, string> = cursor ? { brand_id: b.id, limit: '1', cursor } : { brand_id: b.id, limit: '1' };
      const page: { data: CodeItem[]; pagination: { next_cursor: string | null } } = (await t.request({ method: 'GET', url, admin: true, query })).json();
      labels.push(...page.data.map((x) => x.label));
      cursor = page.pagination.next_cursor;
    } while (cursor);
    expect(labels).toEqual(['A', 'B', 'C']);
    for (const query of [{ limit: '0' }, { limit: '101' }] as Record<string, string>[]) {
      expect((await t.request({ method: 'GET', url, admin: true, query })).statusCode).toBe(422);
    }
    // A cursor that does not decode is paging out of range.
    const bad = await t.request({ method: 'GET', url, admin: true, query: { cursor: Buffer.from('["only-one"]').toString('base64url') } });
    expect([bad.statusCode, bad.json()]).toEqual([400, expect.objectContaining({ error: 'invalid_parameter', param: 'cursor' })]);
  });

  it('answers live conversions and revenue per currency from the ledger', async () => {
    const b = await createBrand(t);
    const code = await createCode(t, { brand_id: b.id, creator_id: maya.id, label: 'TOTALS' });
    const idle = await createCode(t, { brand_id: b.id, creator_id: maya.id, label: 'IDLE' });
    const at = chDateTime(new Date('2026-11-21T12:00:00Z'));
    const row = (id: string, event_type: string, amount: number, currency = 'USD', sandbox = 0, codeId: string | null = code.id) => ({
      brand_id: b.id,
      id,
      event_type,
      transaction_id: id,
      amount,
      currency,
      source: 'sdk',
      code_id: codeId,
      code_label: 'TOTALS',
      resolution_method: 'code',
      sandbox,
      occurred_at: at,
      recorded_at: at,
    });
    await t.services.warehouse.insert('ledger', [
      row('c1', 'purchase', 19.99),
      row('c2', 'purchase', 5.5, 'GBP'),
      row('c3', 'refund', -19.99),
      row('c4', 'purchase', 50, 'USD', 1), // sandbox
      row('c5', 'purchase', 12, 'USD', 0, null), // not credited to a code
    ]);
    await t.services.warehouse.insert('ledger', [row('c2', 'purchase', 5.5, 'GBP')]); // replayed

    const list = (await t.request({ method: 'GET', url, admin: true, query: { brand_id: b.id } })).json();
    const byLabel = new Map(list.data.map((c: CodeItem) => [c.label, c]));
    expect(byLabel.get('TOTALS')).toMatchObject({ conversions: 2, revenue: { USD: 0, GBP: 5.5 } });
    expect(byLabel.get('IDLE')).toMatchObject({ conversions: 0, revenue: {} });
    const totals = await codeTotals(t.services.warehouse, [code, idle]);
    expect(totals.get(code.id)).toEqual({ conversions: 2, revenue: { USD: 0, GBP: 5.5 } });
  });
});
