import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintClickToken } from '../../../src/attribution/links/click-token';
import { createCode } from '../../helpers/attribution-fixtures';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { ANDROID, appLinkCredit, type AttributionBrand, attributionBrand, click, DESKTOP, IPHONE, postPublic, uniqueId, warehouseRows } from './setup';

let t: TestService;
let acme: AttributionBrand;
let globex: AttributionBrand;
beforeAll(async () => {
  // Clicks name their visitor's IP, as a redirect application TRUST_PROXY lists (tests inject from 127.0.0.1).
  t = await startTestService({ env: { TRUST_PROXY: '127.0.0.1' } });
  acme = await attributionBrand(t, 'Acme');
  globex = await attributionBrand(t, 'Globex');
});
afterAll(async () => destroyTestService(t));

const install = (body: Record<string, unknown>, remoteAddress?: string) =>
  postPublic(t, 'installs', { pixel_key: acme.brand.pixel_key, platform: 'ios', ...body }, { remoteAddress });

const creditedCount = async (codeId: string) =>
  (await t.services.db.selectFrom('creator_codes').select('credited_count').where('id', '=', codeId).executeTakeFirstOrThrow()).credited_count;

describe('POST /api/public/attribution/installs: acceptance', () => {
  it('records a new install (201), then answers a retry with the recorded install (200, duplicate)', async () => {
    const installId = uniqueId('inst');
    const first = await install({ install_id: installId, app_version: '1.2.3' });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toEqual({
      ok: true,
      duplicate: false,
      install: {
        install_id: installId,
        platform: 'ios',
        attributed: false,
        resolution_method: 'unattributed',
        confidence: 0,
        link: null,
        code: null,
        creator: null,
        deep_link: null,
      },
    });
    // A retry that now carries a code still answers the install as first recorded.
    const retry = await install({ install_id: installId, code: acme.code.label });
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toEqual({ ...first.json(), duplicate: true });

    await t.settle();
    const rows = await warehouseRows(t, 'installs', 'install_id = {id:String}', { id: installId });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ brand_id: acme.brand.id, platform: 'ios', attributed: 0, resolution_method: 'unattributed', app_version: '1.2.3' });
  });

  it('strips the install ID and cuts it to 128 characters', async () => {
    const long = `${uniqueId('long')}${'x'.repeat(200)}`;
    const res = await install({ install_id: `  ${long}\n` });
    expect(res.statusCode).toBe(201);
    expect(res.json().install.install_id).toBe(long.slice(0, 128));
    // The cut form is the deduplication key.
    const again = await install({ install_id: long.slice(0, 128) });
    expect(again.json().duplicate).toBe(true);
  });

  it('records one install under concurrent identical requests', async () => {
    const installId = uniqueId('race');
    const answers = await Promise.all(Array.from({ length: 12 }, () => install({ install_id: installId })));
    expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.statusCode === 200 && a.json().duplicate === true)).toHaveLength(11);
    await t.settle();
    expect(await warehouseRows(t, 'installs', 'install_id = {id:String}', { id: installId })).toHaveLength(1);
  });

  it('keeps install IDs apart per brand', async () => {
    const installId = uniqueId('shared');
    expect((await install({ install_id: installId })).statusCode).toBe(201);
    const other = await postPublic(t, 'installs', { pixel_key: globex.brand.pixel_key, install_id: installId, platform: 'android' });
    expect(other.statusCode).toBe(201);
  });

  it('answers 403 invalid_pixel_key for a missing or unknown pixel key', async () => {
    for (const pixel_key of [undefined, 'pk_unknown', 42]) {
      const res = await postPublic(t, 'installs', { pixel_key, install_id: uniqueId(), platform: 'ios' });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'invalid_pixel_key' });
    }
  });

  it('answers 422 install_id_required and invalid_platform', async () => {
    for (const install_id of [undefined, '', '   ', 17]) {
      const res = await install({ install_id });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual({ error: 'install_id_required' });
    }
    for (const platform of [undefined, 'web', 'desktop', 3]) {
      const res = await install({ install_id: uniqueId(), platform });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual({ error: 'invalid_platform' });
    }
    expect((await install({ install_id: uniqueId(), platform: ' Android ' })).statusCode).toBe(201);
  });

  it('answers 422 for malformed bodies and 413 over 64 KiB', async () => {
    const bad = await t.request({ method: 'POST', url: '/api/public/attribution/installs', headers: { 'content-type': 'application/json' }, payload: '{' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toEqual({ error: 'invalid_request' }); // {"error":"<code>"} only (docs/api.md#error-codes)
    expect((await install({ install_id: uniqueId(), occurred_at: 'yesterday' })).json()).toEqual({ error: 'invalid_occurred_at' });
    // Instants Postgres or the monthly ClickHouse partitions cannot take are refused, not failed.
    for (const occurred_at of ['0000-01-01T00:00:00Z', '1969-12-31T23:59:59Z', '2100-01-01T00:00:00Z', '2026-02-30T10:00:00Z']) {
      const res = await install({ install_id: uniqueId(), occurred_at });
      expect(res.statusCode, occurred_at).toBe(422);
      expect(res.json()).toEqual({ error: 'invalid_occurred_at' });
    }
    expect((await install({ install_id: uniqueId(), occurred_at: '1970-01-01T00:00:00Z' })).statusCode).toBe(201);
    const big = await install({ install_id: uniqueId(), app_version: 'v'.repeat(65 * 1024) });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toEqual({ error: 'payload_too_large' });
  });
});

describe('installs: resolution', () => {
  it('clipboard: a click token of this brand’s link, 0.95', async () => {
    const token = await click(t, { domain: acme.hostname, slug: 'app', user_agent: IPHONE });
    const installId = uniqueId();
    const res = await install({ install_id: installId, clipboard_token: token });
    expect(res.json().install).toMatchObject({
      attributed: true,
      resolution_method: 'clipboard',
      confidence: 0.95,
      ...appLinkCredit(acme),
    });
    // A retry names the same link, domain and slug as the first answer.
    expect((await install({ install_id: installId })).json()).toEqual({ ...res.json(), duplicate: true });
  });

  it('code: an active code of this brand, case-insensitive, 0.9, no link; counts the credit', async () => {
    const before = await creditedCount(acme.code.id);
    const installId = uniqueId();
    const res = await install({ install_id: installId, code: ` ${acme.code.label.toLowerCase()} ` });
    expect(res.json().install).toEqual({
      install_id: installId,
      platform: 'ios',
      attributed: true,
      resolution_method: 'code',
      confidence: 0.9,
      link: null,
      code: acme.code.label,
      creator: { id: acme.creator.id, name: 'Maya Lopez' },
      deep_link: null,
    });
    // The retry does not count again.
    await install({ install_id: installId, code: acme.code.label });
    expect(await creditedCount(acme.code.id)).toBe(before + 1);
  });

  it('does not credit an inactive code or another brand’s code', async () => {
    const code = await createCode(t, { brand_id: acme.brand.id, creator_id: acme.creator.id, label: 'PAUSED1' });
    await t.request({ method: 'PATCH', url: `/api/internal/attribution-codes/${code.id}`, admin: true, payload: { active: false } });
    expect((await install({ install_id: uniqueId(), code: 'PAUSED1' })).json().install.resolution_method).toBe('unattributed');
    expect((await install({ install_id: uniqueId(), code: globex.code.label })).json().install.resolution_method).toBe('unattributed');
  });

  it('clipboard wins over code', async () => {
    const token = await click(t, { domain: acme.hostname, slug: 'maya' });
    const res = await install({ install_id: uniqueId(), clipboard_token: token, code: acme.code.label });
    expect(res.json().install).toMatchObject({ resolution_method: 'clipboard', code: null, link: { id: acme.web.id } });
  });

  it('a token minted for another brand’s link, or a forged one, never credits', async () => {
    const foreign = await click(t, { domain: globex.hostname, slug: 'app', user_agent: IPHONE });
    const res = await install({ install_id: uniqueId(), clipboard_token: foreign, code: acme.code.label });
    expect(res.json().install.resolution_method).toBe('code');
    const forged = mintClickToken('not-the-secret-key', acme.app.id);
    expect((await install({ install_id: uniqueId(), clipboard_token: forged })).json().install.resolution_method).toBe('unattributed');
    const tampered = `${foreign.slice(0, -2)}AA`;
    expect((await install({ install_id: uniqueId(), clipboard_token: tampered })).json().install.resolution_method).toBe('unattributed');
  });

  it('ip: a recent click on this brand’s app link from the same IP and platform, 0.6 (report-only)', async () => {
    const ip = '198.51.100.23';
    await click(t, { domain: acme.hostname, slug: 'app', user_agent: ANDROID, ip });
    const res = await install({ install_id: uniqueId(), platform: 'android' }, ip);
    expect(res.json().install).toMatchObject({
      attributed: true,
      resolution_method: 'ip',
      confidence: 0.6,
      ...appLinkCredit(acme),
    });
    // The IPv4-mapped form of the same address matches too.
    expect((await install({ install_id: uniqueId(), platform: 'android' }, `::ffff:${ip}`)).json().install.resolution_method).toBe('ip');
  });

  it('ip: no match across platforms, for web links, desktop clicks or another brand’s clicks; a click without user agent matches any platform', async () => {
    await click(t, { domain: acme.hostname, slug: 'app', user_agent: IPHONE, ip: '198.51.100.30' });
    expect((await install({ install_id: uniqueId(), platform: 'android' }, '198.51.100.30')).json().install.resolution_method).toBe('unattributed');
    await click(t, { domain: acme.hostname, slug: 'maya', user_agent: ANDROID, ip: '198.51.100.31' });
    expect((await install({ install_id: uniqueId(), platform: 'android' }, '198.51.100.31')).json().install.resolution_method).toBe('unattributed');
    await click(t, { domain: acme.hostname, slug: 'app', user_agent: DESKTOP, ip: '198.51.100.32' });
    expect((await install({ install_id: uniqueId(), platform: 'ios' }, '198.51.100.32')).json().install.resolution_method).toBe('unattributed');
    await click(t, { domain: globex.hostname, slug: 'app', user_agent: IPHONE, ip: '198.51.100.33' });
    expect((await install({ install_id: uniqueId(), platform: 'ios' }, '198.51.100.33')).json().install.resolution_method).toBe('unattributed');
    await click(t, { domain: acme.hostname, slug: 'app', ip: '198.51.100.34' });
    expect((await install({ install_id: uniqueId(), platform: 'ios' }, '198.51.100.34')).json().install.resolution_method).toBe('ip');
  });

  it('ip: measured from the install’s own time: a click after it did not lead to it (a device clock up to an hour behind is forgiven)', async () => {
    const ip = '198.51.100.41';
    await click(t, { domain: acme.hostname, slug: 'app', user_agent: ANDROID, ip });
    const installedAt = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();
    const before = await install({ install_id: uniqueId(), platform: 'android', occurred_at: installedAt(40 * 24 * 3600_000) }, ip);
    expect(before.json().install.resolution_method).toBe('unattributed');
    const clockBehind = await install({ install_id: uniqueId(), platform: 'android', occurred_at: installedAt(30 * 60_000) }, ip);
    expect(clockBehind.json().install.resolution_method).toBe('ip');
  });

  it('code wins over ip', async () => {
    const ip = '198.51.100.40';
    await click(t, { domain: acme.hostname, slug: 'app', user_agent: IPHONE, ip });
    expect((await install({ install_id: uniqueId(), code: acme.code.label }, ip)).json().install.resolution_method).toBe('code');
  });

  it('writes each install to ClickHouse once with its attribution', async () => {
    const token = await click(t, { domain: acme.hostname, slug: 'app', user_agent: IPHONE });
    const installId = uniqueId('ch');
    await install({ install_id: installId, clipboard_token: token, occurred_at: '2026-11-01T08:00:00+01:00' });
    await t.settle();
    const rows = await warehouseRows(t, 'installs', 'install_id = {id:String}', { id: installId });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      resolution_method: 'clipboard',
      attributed: 1,
      link_id: acme.app.id,
      creator_id: acme.creator.id,
      code_id: null,
      occurred_at: '2026-11-01T07:00:00.000Z',
    });
  });
});
