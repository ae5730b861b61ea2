import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { brandWithSession, type Connection, connect, deliver } from './helpers';

let t: TestService;
let acme: Awaited<ReturnType<typeof brandWithSession>>;
let globex: Awaited<ReturnType<typeof brandWithSession>>;

beforeAll(async () => {
  t = await startTestService({ workers: false });
  acme = await brandWithSession(t, 'Acme');
  globex = await brandWithSession(t, 'Globex');
});
afterAll(async () => destroyTestService(t));

const portal = (cookie: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  t.request({ method, url: `/api/client/attribution/connections${url}`, headers: { cookie, origin: new URL(t.config.publicBaseUrl).origin }, ...(payload ? { payload } : {}) });

describe('portal connections', () => {
  let stripe: Connection;

  it('creates a connection with a svw_ webhook URL on PUBLIC_BASE_URL, never answering the secret', async () => {
    const res = await portal(acme.cookie, 'POST', '', { provider: 'stripe', signing_secret: 'whsec_topsecret_value' });
    expect(res.statusCode).toBe(201);
    stripe = res.json();
    expect(stripe).toMatchObject({
      provider: 'stripe',
      status: 'awaiting_first_event',
      last_error: null,
      last_event_at: null,
      signing_secret_set: true,
      settings: { first_invoice_as_purchase: false },
    });
    expect(stripe.webhook_url).toMatch(/^http:\/\/svc\.test\/api\/webhooks\/attribution\/stripe\/svw_[A-Za-z0-9_-]{40,}$/);
    expect(res.body).not.toContain('whsec_topsecret_value');
  });

  it('stores the token only hashed and sealed, and the secret only sealed', async () => {
    const token = stripe.webhook_url.split('/').at(-1)!;
    const stored = await t.services.db.selectFrom('billing_connections').selectAll().where('id', '=', stripe.id).executeTakeFirstOrThrow();
    const dump = JSON.stringify(stored);
    expect(dump).not.toContain('whsec_topsecret_value');
    expect(dump).not.toContain(token);
    expect(stored.signing_secret_encrypted).toMatch(/^v1\./);
  });

  it('answers 409 already_connected for a second connection of the same provider', async () => {
    const res = await portal(acme.cookie, 'POST', '', { provider: 'stripe' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'already_connected' });
  });

  it('validates settings per provider: apple requires bundle_id', async () => {
    const missing = await portal(acme.cookie, 'POST', '', { provider: 'apple' });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().error).toBe('invalid_request');
    const unknown = await portal(acme.cookie, 'POST', '', { provider: 'shopify', settings: { shop_domain: 'not a domain' } });
    expect(unknown.statusCode).toBe(422);
    const bad = await portal(acme.cookie, 'POST', '', { provider: 'paypal' });
    expect(bad.statusCode).toBe(422);
    const apple = await portal(acme.cookie, 'POST', '', { provider: 'apple', settings: { bundle_id: 'com.acme.app' } });
    expect(apple.statusCode).toBe(201);
    expect(apple.json()).toMatchObject({ settings: { bundle_id: 'com.acme.app', environment: 'both' }, signing_secret_set: false });
  });

  it('keeps Adapty\'s sandbox secret out of the answered settings', async () => {
    const res = await portal(acme.cookie, 'POST', '', {
      provider: 'adapty',
      signing_secret: 'prod-auth-value',
      settings: { sandbox_secret: 'sandbox-auth-value' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ signing_secret_set: true, sandbox_secret_set: true, settings: { install_id_attribute: 'svc_install_id' } });
    expect(res.body).not.toContain('sandbox-auth-value');
    expect(res.body).not.toContain('prod-auth-value');
  });

  it('says plainly, before and after connecting, what a connection without a signing secret allows', async () => {
    const open = await brandWithSession(t, 'Unsigned');
    // Before: the setup cards.
    const cards = (await portal(open.cookie, 'GET', '')).json().setup_cards as { provider: string; signing_secret: { without: string | null } }[];
    const without = Object.fromEntries(cards.map((c) => [c.provider, c.signing_secret.without]));
    expect(without.revenuecat).toMatch(/^Without a signing secret, anyone who has the webhook URL .* can post events for your brand/);
    expect(without.adapty).toMatch(/anyone who has the webhook URL/);
    expect(without.stripe).toMatch(/every delivery is refused \(401\)/);
    expect(without.shopify).toMatch(/every delivery is refused \(401\)/);
    expect(without.apple).toBeNull();
    // After: the connection's answer, in the list too, until a secret is stored.
    const rc = await portal(open.cookie, 'POST', '', { provider: 'revenuecat' });
    expect(rc.json()).toMatchObject({ signing_secret_set: false, signing_secret_warning: expect.stringMatching(/^No signing secret is set: anyone who has the webhook URL/) });
    const listed = (await portal(open.cookie, 'GET', '')).json().data as Connection[];
    expect(listed.find((c) => c.id === rc.json().id)).toMatchObject({ signing_secret_warning: expect.stringContaining('can post events') });
    expect((await portal(open.cookie, 'PATCH', `/${rc.json().id}`, { signing_secret: 'rc-auth' })).json()).toMatchObject({ signing_secret_warning: null });
    const stripeOpen = await portal(open.cookie, 'POST', '', { provider: 'stripe' });
    expect(stripeOpen.json().signing_secret_warning).toMatch(/every delivery is refused/);
    const adaptySandboxOnly = await portal(open.cookie, 'POST', '', { provider: 'adapty', settings: { sandbox_secret: 'sandbox-only' } });
    expect(adaptySandboxOnly.json()).toMatchObject({ signing_secret_warning: null });
    const apple = await portal(open.cookie, 'POST', '', { provider: 'apple', settings: { bundle_id: 'com.open.app' } });
    expect(apple.json()).toMatchObject({ signing_secret_warning: null });
    // The internal list below counts Acme's and Globex's connections only.
    for (const made of [rc, stripeOpen, adaptySandboxOnly, apple]) expect((await portal(open.cookie, 'DELETE', `/${made.json().id}`)).statusCode).toBe(204);
  });

  it('lists the brand\'s connections with one setup card per provider', async () => {
    const res = await portal(acme.cookie, 'GET', '');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.data.map((c: Connection) => c.provider).sort()).toEqual(['adapty', 'apple', 'stripe']);
    expect(body.setup_cards.map((c: { provider: string }) => c.provider)).toEqual(['revenuecat', 'adapty', 'stripe', 'shopify', 'apple']);
    const stripeCard = body.setup_cards.find((c: { provider: string }) => c.provider === 'stripe');
    expect(stripeCard).toMatchObject({ connected: true, connection_id: stripe.id, signing_secret: { required: true } });
    expect(stripeCard.steps.join('\n')).toContain(stripe.webhook_url);
    expect(stripeCard.steps.join('\n')).toContain('charge.refunded');
    const card = (provider: string) => body.setup_cards.find((c: { provider: string }) => c.provider === provider);
    // Apple signs with its own certificates: no secret, and each setting typed for its form.
    expect(card('apple').signing_secret).toMatchObject({ used: false, required: false });
    expect(card('apple').settings).toEqual([
      { key: 'bundle_id', type: 'text', required: true },
      { key: 'app_apple_id', type: 'number', required: false },
      { key: 'environment', type: 'choice', required: false, options: ['both', 'production', 'sandbox'], default: 'both' },
    ]);
    expect(card('stripe').settings).toEqual([{ key: 'first_invoice_as_purchase', type: 'boolean', required: false, default: false }]);
    expect(card('adapty').settings).toEqual([
      { key: 'sandbox_secret', type: 'secret', required: false },
      { key: 'install_id_attribute', type: 'text', required: false, default: 'svc_install_id' },
      { key: 'event_name_map', type: 'map', required: false },
    ]);
    for (const provider of ['revenuecat', 'adapty', 'stripe', 'shopify']) expect(card(provider).signing_secret.used, provider).toBe(true);
    expect(body.setup_cards.find((c: { provider: string }) => c.provider === 'shopify')).toMatchObject({ connected: false, webhook_url: null });
    expect(res.body).not.toContain('whsec_topsecret_value');
  });

  it('updates the secret and merges settings; null removes a setting', async () => {
    const res = await portal(acme.cookie, 'PATCH', `/${stripe.id}`, { signing_secret: 'whsec_rolled', settings: { first_invoice_as_purchase: true } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: stripe.id, signing_secret_set: true, settings: { first_invoice_as_purchase: true }, webhook_url: stripe.webhook_url });
    const cleared = await portal(acme.cookie, 'PATCH', `/${stripe.id}`, { signing_secret: null, settings: { first_invoice_as_purchase: null } });
    expect(cleared.json()).toMatchObject({ signing_secret_set: false, settings: { first_invoice_as_purchase: false } });
    const invalid = await portal(acme.cookie, 'PATCH', `/${stripe.id}`, { settings: { first_invoice_as_purchase: 'yes' } });
    expect(invalid.statusCode).toBe(422);
  });

  it('keeps brands apart: another brand\'s connection is 404 and not listed', async () => {
    for (const [method, payload] of [
      ['PATCH', { settings: {} }],
      ['DELETE', undefined],
    ] as const) {
      const res = await portal(globex.cookie, method, `/${stripe.id}`, payload);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'not_found' });
    }
    expect((await portal(globex.cookie, 'GET', '')).json().data).toEqual([]);
    // Globex may connect Stripe too: one connection per (brand, provider).
    expect((await portal(globex.cookie, 'POST', '', { provider: 'stripe' })).statusCode).toBe(201);
  });

  it('needs a portal session', async () => {
    const res = await t.request({ method: 'GET', url: '/api/client/attribution/connections' });
    expect(res.statusCode).toBe(401);
  });

  it('deletes a connection (204); its webhook URL is then unknown', async () => {
    const shopify = await connect(t, acme.cookie, { provider: 'shopify', signing_secret: 'shpss_key' });
    expect((await portal(acme.cookie, 'DELETE', `/${shopify.id}`)).statusCode).toBe(204);
    expect((await portal(acme.cookie, 'DELETE', `/${shopify.id}`)).statusCode).toBe(404);
    const res = await deliver(t, shopify.webhook_url, '{}');
    expect(res).toEqual({ status: 404, body: { error: 'unknown_connection' } });
  });
});

describe('webhook URL lookup', () => {
  it('answers 404 unknown_connection for an unknown token, provider or a token of another provider', async () => {
    const rc = await connect(t, globex.cookie, { provider: 'revenuecat' });
    const token = rc.webhook_url.split('/').at(-1)!;
    for (const path of [`revenuecat/svw_unknown`, `adapty/${token}`, `paypal/${token}`, `revenuecat/${token}x`]) {
      const res = await t.request({ method: 'POST', url: `/api/webhooks/attribution/${path}`, payload: '{}', headers: { 'content-type': 'application/json' } });
      expect(res.statusCode, path).toBe(404);
      expect(res.json()).toEqual({ error: 'unknown_connection' });
    }
  });
});

describe('stored settings that no longer pass', () => {
  it('refuse the delivery and mark the connection error, like any other failure', async () => {
    const apple = await connect(t, globex.cookie, { provider: 'apple', settings: { bundle_id: 'com.globex.app' } });
    await t.services.db.updateTable('billing_connections').set({ settings: JSON.stringify({}) }).where('id', '=', apple.id).execute();
    const res = await deliver(t, apple.webhook_url, '{"signedPayload":"x.y.z"}');
    expect(res).toEqual({ status: 422, body: { error: 'invalid_connection_settings' } });
    const after = (await portal(globex.cookie, 'GET', '')).json().data.find((c: Connection) => c.id === apple.id);
    expect(after).toMatchObject({ status: 'error', last_error: 'invalid_connection_settings' });
  });
});

describe('internal connections', () => {
  it('lists every brand\'s connections with health, filtered by brand and paged', async () => {
    const all = await t.request({ method: 'GET', url: '/api/internal/attribution-connections', admin: true });
    expect(all.statusCode).toBe(200);
    const data = all.json().data as (Connection & { brand_id: string })[];
    expect(new Set(data.map((c) => c.brand_id))).toEqual(new Set([acme.brandId, globex.brandId]));
    for (const c of data) {
      expect(c).toHaveProperty('status');
      expect(c).toHaveProperty('last_event_at');
      expect(c).toHaveProperty('last_error');
    }
    expect(all.body).not.toContain('whsec_');

    const acmeOnly = await t.request({ method: 'GET', url: `/api/internal/attribution-connections?brand_id=${acme.brandId}`, admin: true });
    expect(acmeOnly.json().data.every((c: { brand_id: string }) => c.brand_id === acme.brandId)).toBe(true);

    const first = await t.request({ method: 'GET', url: '/api/internal/attribution-connections?limit=2', admin: true });
    expect(first.json().data).toHaveLength(2);
    expect(first.json().pagination.has_more).toBe(true);
    const rest = await t.request({
      method: 'GET',
      url: `/api/internal/attribution-connections?limit=100&cursor=${first.json().pagination.next_cursor}`,
      admin: true,
    });
    expect([...first.json().data, ...rest.json().data].map((c: Connection) => c.id)).toEqual(data.map((c) => c.id));
    expect(rest.json().pagination).toEqual({ next_cursor: null, has_more: false });
    // A cursor this list never gave is paging out of range, not an empty page.
    const junk = await t.request({ method: 'GET', url: '/api/internal/attribution-connections?cursor=zzz', admin: true });
    expect([junk.statusCode, junk.json()]).toEqual([400, expect.objectContaining({ error: 'invalid_parameter', param: 'cursor' })]);
  });

  it('deletes a connection; there is no internal create', async () => {
    const [victim] = (await t.request({ method: 'GET', url: `/api/internal/attribution-connections?brand_id=${globex.brandId}`, admin: true })).json().data;
    const res = await t.request({ method: 'DELETE', url: `/api/internal/attribution-connections/${victim.id}`, admin: true });
    expect(res.statusCode).toBe(204);
    expect((await t.request({ method: 'DELETE', url: `/api/internal/attribution-connections/${victim.id}`, admin: true })).statusCode).toBe(404);
    const create = await t.request({ method: 'POST', url: '/api/internal/attribution-connections', admin: true, payload: { provider: 'stripe' } });
    expect(create.statusCode).toBe(404);
  });

  it('needs the admin JWT', async () => {
    expect((await t.request({ method: 'GET', url: '/api/internal/attribution-connections' })).statusCode).toBe(401);
  });
});
