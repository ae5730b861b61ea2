import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDomain, createLink } from '../../helpers/attribution-fixtures';
import { createBrand, createCreator } from '../../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { createPortalUser, portalLogin } from '../../portal/helpers';

/** The portal's apps (GET/PUT /apps) and the association files the link host builds from them. */

let t: TestService;
let acme: { id: string };
let globex: { id: string };
let acmeCookie: string;
let globexCookie: string;
const FP1 = Array.from({ length: 32 }, (_, i) => (i * 7).toString(16).padStart(2, '0')).join(':'); // lower case
const FP2 = Array.from({ length: 32 }, () => 'AB').join(':');

beforeAll(async () => {
  t = await startTestService({ workers: false });
  acme = await createBrand(t, { name: 'Acme' });
  globex = await createBrand(t, { name: 'Globex' });
  await createPortalUser(t, acme.id, 'apps@acme.test');
  await createPortalUser(t, globex.id, 'apps@globex.test');
  acmeCookie = await portalLogin(t, 'apps@acme.test');
  globexCookie = await portalLogin(t, 'apps@globex.test');
});
afterAll(async () => destroyTestService(t));

const apps = (cookie: string, method: 'GET' | 'PUT' = 'GET', payload?: unknown) =>
  t.request({
    method,
    url: '/api/client/attribution/apps',
    headers: { cookie, ...(method === 'PUT' ? { origin: t.config.publicBaseUrl } : {}) },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

const visit = (host: string, path: string, method: 'GET' | 'HEAD' = 'GET') => t.request({ method, url: path, headers: { host } });
const AASA = '/.well-known/apple-app-site-association';
const ASSETLINKS = '/.well-known/assetlinks.json';

describe('portal /apps', () => {
  it('answers nulls until set; PUT replaces both, fingerprints upper-case in the order given', async () => {
    expect((await apps(globexCookie)).json()).toEqual({ ios: null, android: null });
    const body = {
      ios: { team_id: 'ABCDE12345', bundle_id: 'com.acme.app' },
      android: { package: 'com.acme.app', sha256_cert_fingerprints: [FP1, FP2] },
    };
    const put = await apps(globexCookie, 'PUT', body);
    expect(put.statusCode, put.body).toBe(200);
    const expected = { ...body, android: { ...body.android, sha256_cert_fingerprints: [FP1.toUpperCase(), FP2] } };
    expect(put.json()).toEqual(expected);
    expect((await apps(globexCookie)).json()).toEqual(expected);
    // An omitted platform is null.
    expect((await apps(globexCookie, 'PUT', { ios: body.ios })).json()).toEqual({ ios: body.ios, android: null });
    expect((await apps(globexCookie)).json()).toEqual({ ios: body.ios, android: null });
    // One brand's apps are its own.
    expect((await apps(acmeCookie)).json()).toEqual({ ios: null, android: null });
    expect((await apps(globexCookie, 'PUT', {})).json()).toEqual({ ios: null, android: null });
  });

  it('refuses invalid identifiers with 422 invalid_request, storing nothing', async () => {
    const ios = { team_id: 'ABCDE12345', bundle_id: 'com.acme.app' };
    const android = { package: 'com.acme.app', sha256_cert_fingerprints: [FP2] };
    await apps(globexCookie, 'PUT', { ios, android });
    const bad = [
      { ios: { ...ios, team_id: 'abcde12345' } },
      { ios: { ...ios, team_id: 'ABCDE1234' } },
      { ios: { ...ios, team_id: 'ABCDE-2345' } },
      { ios: { team_id: 'ABCDE12345' } },
      { ios: { ...ios, bundle_id: 'acmeapp' } },
      { ios: { ...ios, bundle_id: 'com.acme_app' } },
      { ios: { ...ios, bundle_id: 'com..acme' } },
      { ios: { ...ios, bundle_id: `com.${'a'.repeat(152)}` } },
      { android: { ...android, package: 'acme' } },
      { android: { ...android, package: 'com.1acme' } },
      { android: { ...android, package: '_com.acme' } },
      { android: { ...android, package: 'com.acme-app' } },
      { android: { ...android, sha256_cert_fingerprints: [] } },
      { android: { ...android, sha256_cert_fingerprints: Array(11).fill(FP2) } },
      { android: { ...android, sha256_cert_fingerprints: [FP2.slice(3)] } },
      { android: { ...android, sha256_cert_fingerprints: [FP2.replace('AB', 'ZZ')] } },
      { android: { ...android, sha256_cert_fingerprints: [FP2.replaceAll(':', '')] } },
      { android: { package: 'com.acme.app' } },
      { ios: 'com.acme.app' },
    ];
    for (const body of bad) {
      const res = await apps(globexCookie, 'PUT', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(res.json().error).toBe('invalid_request');
    }
    expect((await apps(globexCookie)).json()).toEqual({ ios, android });
    // Limits that hold: 155 characters, 10 fingerprints.
    expect((await apps(globexCookie, 'PUT', { ios: { ...ios, bundle_id: `com.${'a'.repeat(151)}` } })).statusCode).toBe(200);
    expect((await apps(globexCookie, 'PUT', { android: { ...android, sha256_cert_fingerprints: Array(10).fill(FP2) } })).statusCode).toBe(200);
  });

  it('needs a session', async () => {
    expect((await t.request({ method: 'GET', url: '/api/client/attribution/apps' })).statusCode).toBe(401);
  });
});

describe('association files on the link host', () => {
  let own: { hostname: string };
  let shared: { hostname: string };
  let globexOwn: { hostname: string };
  beforeAll(async () => {
    const creator = await createCreator(t, { name: 'Maya Lopez', first_name: 'Maya' });
    own = await createDomain(t, { hostname: 'go.acme-apps.example', brand_id: acme.id });
    shared = await createDomain(t, { hostname: 'shared-apps.example' });
    globexOwn = await createDomain(t, { hostname: 'go.globex-apps.example', brand_id: globex.id });
    const shared_ = await t.services.db.selectFrom('domains').select('id').where('hostname', '=', shared.hostname).executeTakeFirstOrThrow();
    await createLink(t, { brand_id: acme.id, creator_id: creator.id, domain_id: shared_.id, slug: 'maya' });
    await apps(acmeCookie, 'PUT', {
      ios: { team_id: 'ABCDE12345', bundle_id: 'com.acme.app' },
      android: { package: 'com.acme.app', sha256_cert_fingerprints: [FP1, FP2] },
    });
    await apps(globexCookie, 'PUT', {});
  });

  it("serves both files on the brand's operator domain: 200 application/json, exactly as Apple and Google read them", async () => {
    const aasa = await visit(own.hostname, AASA);
    expect(aasa.statusCode).toBe(200);
    expect(aasa.headers['content-type']).toBe('application/json');
    expect(aasa.headers.location).toBeUndefined();
    expect(aasa.json()).toEqual({ applinks: { details: [{ appIDs: ['ABCDE12345.com.acme.app'], components: [{ '/': '/*' }] }] } });
    const links = await visit(`WWW.${own.hostname.toUpperCase()}:443`, ASSETLINKS);
    expect(links.statusCode).toBe(200);
    expect(links.headers['content-type']).toBe('application/json');
    expect(links.json()).toEqual([
      {
        relation: ['delegate_permission/common.handle_all_urls'],
        target: { namespace: 'android_app', package_name: 'com.acme.app', sha256_cert_fingerprints: [FP1.toUpperCase(), FP2] },
      },
    ]);
    // A query string changes nothing; HEAD answers as GET.
    expect((await visit(own.hostname, `${AASA}?v=1`)).statusCode).toBe(200);
    const head = await visit(own.hostname, AASA, 'HEAD');
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-type']).toBe('application/json');
  });

  it('serves each file only while its platform is set', async () => {
    await apps(acmeCookie, 'PUT', { ios: { team_id: 'ABCDE12345', bundle_id: 'com.acme.app' } });
    expect((await visit(own.hostname, AASA)).statusCode).toBe(200);
    const none = await visit(own.hostname, ASSETLINKS);
    expect(none.statusCode).toBe(404);
    expect(none.headers['content-type']).toBe('text/html; charset=utf-8');
    await apps(acmeCookie, 'PUT', { android: { package: 'com.acme.app', sha256_cert_fingerprints: [FP2] } });
    expect((await visit(own.hostname, AASA)).statusCode).toBe(404);
    expect((await visit(own.hostname, ASSETLINKS)).json()[0].target.sha256_cert_fingerprints).toEqual([FP2]);
  });

  it('never on a shared domain, nor on a brand without apps: 404 text/html', async () => {
    await apps(acmeCookie, 'PUT', { ios: { team_id: 'ABCDE12345', bundle_id: 'com.acme.app' }, android: { package: 'com.acme.app', sha256_cert_fingerprints: [FP2] } });
    for (const host of [shared.hostname, globexOwn.hostname]) {
      for (const path of [AASA, ASSETLINKS]) {
        const res = await visit(host, path);
        expect(res.statusCode, `${host}${path}`).toBe(404);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      }
    }
  });

  it('on a portal domain only once verified (a pending one is no attribution domain)', async () => {
    const claim = await t.request({
      method: 'POST',
      url: '/api/client/attribution/domains',
      headers: { cookie: acmeCookie, origin: t.config.publicBaseUrl },
      payload: { hostname: 'links.acme-portal.example' },
    });
    expect(claim.statusCode, claim.body).toBe(201);
    const pending = await visit('links.acme-portal.example', AASA);
    expect(pending.statusCode).toBe(404);
    expect(pending.body).not.toContain('applinks');
    // Verified as a DNS check would mark it (the check itself: test/portal/domains.test.ts).
    await t.services.db.updateTable('domains').set({ verification_status: 'verified' }).where('id', '=', claim.json().id).execute();
    await t.services.linkChanges.caughtUp();
    const verified = await visit('links.acme-portal.example', AASA);
    expect(verified.statusCode).toBe(200);
    expect(verified.json().applinks.details[0].appIDs).toEqual(['ABCDE12345.com.acme.app']);
  });
});
