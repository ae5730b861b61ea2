import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLink } from '../../helpers/attribution-fixtures';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { createPortalUser, portal, portalLogin } from '../../portal/helpers';
import { ANDROID, type AttributionBrand, attributionBrand, click, IPHONE, postPublic, uniqueId } from '../public/setup';

/** A link's deep link (internal create and PATCH, every link item) and the install answer's deferred one. */

let t: TestService;
let acme: AttributionBrand;
beforeAll(async () => {
  // Clicks name their visitor's IP, as a redirect application TRUST_PROXY lists (tests inject from 127.0.0.1).
  t = await startTestService({ workers: false, env: { TRUST_PROXY: '127.0.0.1' } });
  acme = await attributionBrand(t, 'Acme');
});
afterAll(async () => destroyTestService(t));

const url = '/api/internal/attribution-links';
const patch = (id: number | string, payload: Record<string, unknown>) => t.request({ method: 'PATCH', url: `${url}/${id}`, admin: true, payload });
const install = (body: Record<string, unknown>, remoteAddress?: string) =>
  postPublic(t, 'installs', { pixel_key: acme.brand.pixel_key, platform: 'ios', ...body }, { remoteAddress });

/** An app link of Acme's with this deep link, on a slug of its own. */
async function appLink(deepLink: string | null) {
  const res = await t.request({
    method: 'POST',
    url,
    admin: true,
    payload: {
      ...acme.owner,
      slug: uniqueId('app'),
      type: 'app',
      destination_url: 'https://acme.example/app',
      ios_url: 'https://apps.apple.com/app/id123456789',
      android_url: 'https://play.google.com/store/apps/details?id=com.acme.app',
      deep_link: deepLink,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; slug: string; deep_link: string | null };
}

describe('deep_link on internal links', () => {
  it('is stored trimmed on create, answered by POST, GET and the list; null when not given', async () => {
    const link = await appLink('  /recipes/42?tab=steps  ');
    expect(link.deep_link).toBe('/recipes/42?tab=steps');
    expect((await t.request({ method: 'GET', url: `${url}/${link.id}`, admin: true })).json().deep_link).toBe('/recipes/42?tab=steps');
    const list = (await t.request({ method: 'GET', url: `${url}?brand_id=${acme.brand.id}`, admin: true })).json().data;
    expect(list.find((l: { id: string }) => l.id === link.id).deep_link).toBe('/recipes/42?tab=steps');
    const plain = await createLink(t, { ...acme.owner, slug: uniqueId('plain') });
    expect(plain.deep_link).toBeNull();
  });

  it('takes a path, https and an app scheme; PATCH answers the link and null clears it', async () => {
    const link = await appLink(null);
    for (const value of ['/p', 'https://acme.example/recipes/42', 'acme://recipes/42', 'Acme-App+v2.beta:open?x=1', `/${'a'.repeat(2047)}`]) {
      const res = await patch(link.id, { deep_link: value });
      expect(res.statusCode, `${value}: ${res.body}`).toBe(200);
      expect(res.json()).toMatchObject({ id: link.id, slug: link.slug, deep_link: value });
    }
    const cleared = await patch(link.id, { deep_link: null });
    expect(cleared.statusCode).toBe(200);
    expect(cleared.json().deep_link).toBeNull();
    // A PATCH of another field keeps it.
    await patch(link.id, { deep_link: '/kept' });
    expect((await patch(link.id, { active: true })).json().deep_link).toBe('/kept');
  });

  it('refuses anything else with 422 invalid_request, on create and PATCH, changing nothing', async () => {
    const link = await appLink('/before');
    const refused = [
      '',
      '   ',
      '//evil.example/x',
      '/\\evil.example',
      'recipes/42',
      'http://acme.example/x',
      'HTTP://acme.example/x',
      'javascript:alert(1)',
      'JavaScript:alert(1)',
      'data:text/html,x',
      'file:///etc/passwd',
      'vbscript:x',
      'blob:https://acme.example/1',
      'about:blank',
      '1acme://x',
      'https://',
      '/a\nb',
      '/a\u0000b',
      '/a\u007fb',
      'acme://x\r\nSet-Cookie: a=b',
      `/${'a'.repeat(2048)}`,
      42,
      true,
      {},
    ];
    for (const value of refused) {
      const res = await patch(link.id, { deep_link: value });
      expect(res.statusCode, JSON.stringify(value)).toBe(422);
      expect(res.json().error).toBe('invalid_request');
      const created = await t.request({ method: 'POST', url, admin: true, payload: { ...acme.owner, slug: uniqueId('x'), destination_url: 'https://acme.example/', deep_link: value } });
      expect(created.statusCode, JSON.stringify(value)).toBe(422);
    }
    expect((await t.request({ method: 'GET', url: `${url}/${link.id}`, admin: true })).json().deep_link).toBe('/before');
  });

  it('shows on the portal /links item', async () => {
    const link = await appLink('acme://recipes/7');
    await createPortalUser(t, acme.brand.id, 'links@acme.test');
    const a = portal(t, await portalLogin(t, 'links@acme.test'));
    const items = (await a.get('/links?limit=100')).json().data as { id: string; deep_link: string | null }[];
    expect(items.find((l) => l.id === link.id)?.deep_link).toBe('acme://recipes/7');
    expect(items.find((l) => l.id === String(acme.web.id))?.deep_link).toBeNull();
  });
});

describe('the install answer’s deep_link (deferred)', () => {
  it('clipboard: the link’s deep link when recorded; a retry answers the one stored then, a later install the new one', async () => {
    const link = await appLink('/recipes/42');
    const token = await click(t, { domain: acme.hostname, slug: link.slug, user_agent: IPHONE });
    const installId = uniqueId('inst');
    const first = await install({ install_id: installId, clipboard_token: token });
    expect(first.statusCode).toBe(201);
    expect(first.json().install).toMatchObject({ resolution_method: 'clipboard', deep_link: '/recipes/42' });

    await patch(link.id, { deep_link: 'acme://recipes/43' });
    const retry = await install({ install_id: installId, clipboard_token: token });
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toMatchObject({ duplicate: true, install: { deep_link: '/recipes/42' } });
    expect((await install({ install_id: uniqueId('inst'), clipboard_token: token })).json().install.deep_link).toBe('acme://recipes/43');
  });

  it('ip: the matched link’s deep link', async () => {
    const link = await appLink('/promo/spring');
    const ip = '198.51.100.77';
    await click(t, { domain: acme.hostname, slug: link.slug, user_agent: ANDROID, ip });
    const res = await install({ install_id: uniqueId('inst'), platform: 'android' }, ip);
    expect(res.json().install).toMatchObject({ resolution_method: 'ip', link: { id: Number(link.id) }, deep_link: '/promo/spring' });
  });

  it('null for a link without one, a code and an unattributed install', async () => {
    const token = await click(t, { domain: acme.hostname, slug: 'app', user_agent: IPHONE });
    const viaLink = await install({ install_id: uniqueId('inst'), clipboard_token: token });
    expect(viaLink.json().install).toMatchObject({ resolution_method: 'clipboard', deep_link: null });
    const viaCode = await install({ install_id: uniqueId('inst'), code: acme.code.label });
    expect(viaCode.json().install).toMatchObject({ resolution_method: 'code', deep_link: null });
    const none = await install({ install_id: uniqueId('inst') });
    expect(none.json().install).toMatchObject({ resolution_method: 'unattributed', deep_link: null });
    const retry = await install({ install_id: none.json().install.install_id });
    expect(retry.json().install).toHaveProperty('deep_link', null);
  });
});
