import 'reflect-metadata'; // @peculiar/x509 needs a Reflect polyfill
import { createHmac, KeyObject, sign, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { expect } from 'vitest';
import { createBrand } from '../../helpers/fixtures';
import type { TestService } from '../../helpers/harness';

/** Test helpers for billing webhooks: portal log-in, connections, signed deliveries, ledger rows. */

export type Connection = {
  id: string;
  provider: string;
  status: 'awaiting_first_event' | 'connected' | 'error';
  last_error: string | null;
  settings: Record<string, unknown>;
  webhook_url: string;
  last_event_at: string | null;
  signing_secret_set: boolean;
  signing_secret_warning: string | null;
};

/** A brand with a portal user, logged in: answers the brand id and the session cookie. */
export async function brandWithSession(t: TestService, name = 'Acme') {
  const brand = await createBrand(t, { name });
  const email = `owner-${brand.id}@brand.test`;
  const password = 'a long enough password';
  const user = await t.request({ method: 'POST', url: `/api/internal/brands/${brand.id}/portal-users`, admin: true, payload: { email, password } });
  expect(user.statusCode).toBe(201);
  const login = await t.request({ method: 'POST', url: '/api/client/auth/login', payload: { email, password } });
  expect(login.statusCode).toBe(200);
  return { brandId: brand.id, pixelKey: brand.pixel_key, cookie: String(login.headers['set-cookie']).split(';')[0]! };
}

export async function connect(t: TestService, cookie: string, body: Record<string, unknown>): Promise<Connection> {
  const res = await t.request({ method: 'POST', url: '/api/client/attribution/connections', headers: { cookie, origin: new URL(t.config.publicBaseUrl).origin }, payload: body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

export async function connectionOf(t: TestService, cookie: string, id: string): Promise<Connection> {
  const res = await t.request({ method: 'GET', url: '/api/client/attribution/connections', headers: { cookie } });
  expect(res.statusCode).toBe(200);
  return (res.json().data as Connection[]).find((c) => c.id === id)!;
}

/** Posts raw bytes to a connection's webhook URL, as the provider would. */
export async function deliver(t: TestService, webhookUrl: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const res = await t.request({
    method: 'POST',
    url: new URL(webhookUrl).pathname,
    payload: body,
    headers: { 'content-type': 'application/json', ...headers },
  });
  return { status: res.statusCode, body: res.json() as Record<string, unknown> };
}

export type LedgerRow = {
  event_type: string;
  transaction_id: string;
  external_user_id: string | null;
  amount: string;
  currency: string;
  source: string;
  sandbox: boolean;
  click_token: string | null;
  link_id: number | null;
  creator_id: string | null;
  code_label: string | null;
  resolution_method: string;
  occurred_at: Date;
};

export async function ledgerRows(t: TestService, brandId: string): Promise<LedgerRow[]> {
  return (await t.services.db
    .selectFrom('ledger_events')
    .select([
      'event_type',
      'transaction_id',
      'external_user_id',
      'amount',
      'currency',
      'source',
      'sandbox',
      'click_token',
      'link_id',
      'creator_id',
      'code_label',
      'resolution_method',
      'occurred_at',
    ])
    .where('brand_id', '=', brandId)
    .orderBy('recorded_at')
    .execute()) as LedgerRow[];
}

/** The ledger row with this key; fails the test when there is none. */
export async function ledgerRow(t: TestService, brandId: string, eventType: string, transactionId: string) {
  const row = (await ledgerRows(t, brandId)).find((r) => r.event_type === eventType && r.transaction_id === transactionId);
  expect(row, `${eventType} ${transactionId}`).toBeDefined();
  return row!;
}

/** `Stripe-Signature` for a body, as Stripe computes it; several secrets give several v1 (a roll). */
export function stripeSignature(body: string, secrets: string[], at = Math.floor(Date.now() / 1000)): string {
  const v1 = secrets.map((s) => `v1=${createHmac('sha256', s).update(`${at}.${body}`).digest('hex')}`);
  return [`t=${at}`, ...v1].join(',');
}

/** `X-Shopify-Hmac-Sha256` for a body. */
export const shopifyHmac = (body: string, secret: string) => createHmac('sha256', secret).update(body).digest('base64');

/**
 * A certificate authority shaped like Apple's: a P-384 root, and chains issued under it
 * (intermediate P-384 with OID 1.2.840.113635.100.6.2.1 → leaf P-256 with OID
 * 1.2.840.113635.100.6.11.1), made here so tests can sign App Store notifications. The
 * service trusts `rootDer` through TEST_APPLE_ROOT_CA (honoured under NODE_ENV=test only).
 */
export async function makeAppleCa() {
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const p384 = { name: 'ECDSA', namedCurve: 'P-384', hash: 'SHA-384' } as const;
  const p256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
  const notBefore = new Date(Date.now() - 365 * 86_400_000);
  const notAfter = new Date(Date.now() + 365 * 86_400_000);
  const marker = (oid: string) => new x509.Extension(oid, false, new Uint8Array([0x05, 0x00])); // DER NULL, as Apple's
  const der = (c: x509.X509Certificate) => Buffer.from(c.rawData).toString('base64');
  const keys = async (alg: typeof p384 | typeof p256) => (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;

  const rootKeys = await keys(p384);
  const root = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=Test Root CA - G3, O=Test',
    notBefore,
    notAfter,
    keys: rootKeys,
    signingAlgorithm: p384,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
  });

  return {
    rootDer: der(root),
    /** A signer whose JWS header carries [leaf, intermediate, root]; `leafOid: false` leaves Apple's marker out. */
    async chain(opts: { leafOid?: boolean } = {}) {
      const intermediateKeys = await keys(p384);
      const intermediate = await x509.X509CertificateGenerator.create({
        serialNumber: '02',
        subject: 'CN=Test Worldwide Developer Relations CA - G6, O=Test',
        issuer: root.subject,
        notBefore,
        notAfter,
        publicKey: intermediateKeys.publicKey,
        signingKey: rootKeys.privateKey,
        signingAlgorithm: p384,
        extensions: [new x509.BasicConstraintsExtension(true, 0, true), marker('1.2.840.113635.100.6.2.1')],
      });
      const leafKeys = await keys(p256);
      const leaf = await x509.X509CertificateGenerator.create({
        serialNumber: '03',
        subject: 'CN=Test StoreKit Signing, O=Test',
        issuer: intermediate.subject,
        notBefore,
        notAfter,
        publicKey: leafKeys.publicKey,
        signingKey: intermediateKeys.privateKey,
        signingAlgorithm: p384,
        extensions: opts.leafOid === false ? [] : [marker('1.2.840.113635.100.6.11.1')],
      });
      const leafKey = KeyObject.from(leafKeys.privateKey);
      const x5c = [der(leaf), der(intermediate), der(root)];
      /** A compact JWS (ES256, x5c) of `payload`, signed by the leaf. */
      return (payload: unknown, header: Record<string, unknown> = {}): string => {
        const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
        const input = `${b64({ alg: 'ES256', x5c, ...header })}.${b64(payload)}`;
        const signature = sign('sha256', Buffer.from(input), { key: leafKey, dsaEncoding: 'ieee-p1363' });
        return `${input}.${signature.toString('base64url')}`;
      };
    },
  };
}
