import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createBrand } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { createPortalUser, type Portal, portal, portalLogin } from './helpers';
import { pageParams } from '../../src/attribution/reporting/paging';
import { parseQuery } from '../../src/http/query';
import { portalRange, previousRange, rangeParams } from '../../src/portal/range';
import type { Warehouse } from '../../src/warehouse/clickhouse';

/** The portal's ranges: the Data API's period rules (docs/api.md#semantics) with 30d by default. */
const firstFact = (first: string | null) => ({ rows: async () => [{ first }] }) as unknown as Warehouse;
const resolve = async (query: Record<string, unknown>, today = '2026-11-22', first: string | null = '2025-03-04') =>
  portalRange(firstFact(first), 'brand', parseQuery(rangeParams, query), today);

describe('portal ranges', () => {
  it('resolves every period to an inclusive range of UTC days ending today, 30d by default', async () => {
    const cases: [string, string][] = [
      ['24h', '2026-11-21'],
      ['7d', '2026-11-16'],
      ['30d', '2026-10-24'],
      ['60d', '2026-09-24'],
      ['90d', '2026-08-25'],
      ['6m', '2026-05-23'],
      ['ytd', '2026-01-01'],
      ['all', '2025-03-04'],
    ];
    for (const [period, start] of cases) {
      expect(await resolve({ period }), period).toEqual({ period, start_date: start, end_date: '2026-11-22' });
    }
    expect(await resolve({})).toEqual({ period: '30d', start_date: '2026-10-24', end_date: '2026-11-22' });
    expect(await resolve({ period: 'all' }, '2026-11-22', null)).toMatchObject({ start_date: '2026-11-22' });
  });

  it('takes custom dates, with or without period=custom', async () => {
    const custom = { period: 'custom', start_date: '2026-01-01', end_date: '2026-01-10' };
    expect(await resolve({ start_date: '2026-01-01', end_date: '2026-01-10' })).toEqual(custom);
    expect(await resolve(custom)).toEqual(custom);
  });

  it('refuses bad parameters with 400 invalid_parameter naming the parameter', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ period: '2w' }, 'period'],
      [{ period: 'custom' }, 'start_date'],
      [{ period: '7d', start_date: '2026-01-01', end_date: '2026-01-02' }, 'period'],
      [{ start_date: '2026-01-01' }, 'end_date'],
      [{ end_date: '2026-01-01' }, 'start_date'],
      [{ start_date: '2026-01-02', end_date: '2026-01-01' }, 'end_date'],
      [{ start_date: '2026-13-01', end_date: '2026-12-31' }, 'start_date'],
      [{ start_date: '2026-1-1', end_date: '2026-12-31' }, 'start_date'],
      [{ period: ['7d', '30d'] }, 'period'],
    ];
    for (const [query, param] of cases) {
      await expect(resolve(query), JSON.stringify(query)).rejects.toMatchObject({ status: 400, body: { error: 'invalid_parameter', param } });
    }
  });

  it('bounds ranges: no day before 2000-01-01, none more than 366 days after today', async () => {
    const today = '2026-11-22';
    const refused: [Record<string, unknown>, string][] = [
      [{ start_date: '1970-01-01', end_date: '2149-06-06' }, 'start_date'],
      [{ start_date: '1999-12-31', end_date: '2026-01-01' }, 'start_date'],
      [{ period: 'custom', start_date: '2026-01-01', end_date: '2027-11-24' }, 'end_date'],
      [{ start_date: '2026-02-30', end_date: '2026-03-01' }, 'start_date'],
      [{ limit: '0x10' }, 'limit'],
    ];
    const withLimit = rangeParams.extend(pageParams(z.tuple([z.string()])));
    for (const [query, param] of refused) {
      const run = async () => portalRange(firstFact(null), 'brand', parseQuery(withLimit, query), today);
      await expect(run(), JSON.stringify(query)).rejects.toMatchObject({ status: 400, body: { error: 'invalid_parameter', param } });
    }
    await expect(resolve({ start_date: '2026-02-30', end_date: '2026-03-01' })).rejects.toMatchObject({
      body: { message: expect.stringContaining('2026-02-30 does not exist') },
    });
    expect(await resolve({ start_date: '2000-01-01', end_date: '2027-11-23' }, today)).toEqual({
      period: 'custom',
      start_date: '2000-01-01',
      end_date: '2027-11-23',
    });
  });

  it('starts `all` no earlier than 2000-01-01, whatever time a public event carried', async () => {
    expect(await resolve({ period: 'all' }, '2026-11-22', '1970-01-01')).toEqual({ period: 'all', start_date: '2000-01-01', end_date: '2026-11-22' });
    expect(await resolve({ period: 'all' }, '2026-11-22', '2000-01-02')).toMatchObject({ start_date: '2000-01-02' });
  });

  it('compares with the range of equal length just before', () => {
    expect(previousRange({ start_date: '2026-03-01', end_date: '2026-03-31' })).toEqual({ start_date: '2026-01-29', end_date: '2026-02-28' });
    expect(previousRange({ start_date: '2026-11-22', end_date: '2026-11-22' })).toEqual({ start_date: '2026-11-21', end_date: '2026-11-21' });
  });
});

describe('portal ranges and integers over HTTP', () => {
  let t: TestService;
  let p: Portal;
  beforeAll(async () => {
    t = await startTestService({ workers: false });
    const brand = await createBrand(t, { name: 'Ranges' });
    await createPortalUser(t, brand.id, 'ranges@acme.test');
    p = portal(t, await portalLogin(t, 'ranges@acme.test'));
  });
  afterAll(async () => destroyTestService(t));

  it('refuses unbounded ranges, nonexistent dates and integers not in decimal digits with 400 invalid_parameter', async () => {
    const cases: [string, string][] = [
      ['/overview?start_date=1970-01-01&end_date=2149-06-06', 'start_date'],
      ['/overview?start_date=2026-01-01&end_date=2149-06-06', 'end_date'],
      ['/links?start_date=1999-12-31&end_date=2026-01-01', 'start_date'],
      ['/events?start_date=2026-02-30&end_date=2026-03-01', 'start_date'],
      ['/events?limit=0x10', 'limit'],
      ['/events?limit=1e2', 'limit'],
      ['/codes?limit=%2B5', 'limit'],
      ['/links?limit=5.0', 'limit'],
      ['/links?limit=%205', 'limit'],
    ];
    for (const [path, param] of cases) {
      const res = await p.get(path);
      expect(res.statusCode, `${path}: ${res.body}`).toBe(400);
      expect(res.json(), path).toMatchObject({ error: 'invalid_parameter', param });
    }
    const ok = await p.get('/overview?start_date=2000-01-01&end_date=2000-01-02');
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ start_date: '2000-01-01', end_date: '2000-01-02' });
  });
});
