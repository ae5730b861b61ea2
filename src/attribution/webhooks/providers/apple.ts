import {
  Environment,
  type JWSTransactionDecodedPayload,
  type ResponseBodyV2DecodedPayload,
  SignedDataVerifier,
  VerificationException,
  VerificationStatus,
} from '@apple/app-store-server-library';
import { z } from 'zod';
import type { LedgerDraft, LedgerEventType } from '../../ledger/types';
import {
  type Connector,
  type Handlers,
  ignored,
  type MapContext,
  type Mapped,
  mapByType,
  rows,
  unauthenticated,
} from '../connector';
import { Refusal } from '../../../refusal';
import { amountFor, money, optionalKey, parseJson, read, refundTargets, transactionKey, uuidOrNull } from '../mapping';

/**
 * Apple App Store Server Notifications V2 (docs/webhooks.md#what-each-provider-records), verified by Apple's own
 * `SignedDataVerifier` with online checks off. Why each check, and the choices where Apple's
 * documentation is silent: docs/webhooks.md.
 */

export const appleSettings = z.strictObject({
  bundle_id: z.string().trim().min(1).max(255),
  app_apple_id: z.number().int().positive().optional(),
  /** Which App Store environments count; excluding Sandbox also stops sandbox purchases from connecting. */
  environment: z.enum(['both', 'production', 'sandbox']).default('both'),
});
type Settings = z.output<typeof appleSettings>;

type Verified = { notification: ResponseBodyV2DecodedPayload; transaction: JWSTransactionDecodedPayload | null };

/** The notification body: one signed JWS (App Store Server Notifications V2). */
const appleBody = z.looseObject({ signedPayload: z.string().min(1) });
const notification = z.looseObject({
  notificationType: z.string(),
  subtype: z.string().nullish(),
  signedDate: z.number().nullish(),
  data: z.looseObject({ environment: z.string().nullish() }).nullish(),
});
const transaction = z.looseObject({
  transactionId: z.string().min(1),
  originalTransactionId: z.string().nullish(),
  purchaseDate: z.number().nullish(),
  price: z.number().int().nullish(), // milliunits: an integer JSON carried exactly
  currency: z.string().nullish(),
  appAccountToken: z.string().nullish(),
  offerDiscountType: z.string().nullish(),
  inAppOwnershipType: z.string().nullish(),
  revocationDate: z.number().nullish(),
  revocationType: z.string().nullish(),
  revocationPercentage: z.number().nullish(),
});
type AppleEvent = { notification: z.output<typeof notification>; transaction: z.output<typeof transaction> | null };

const initialBuy = (e: AppleEvent) => {
  if (e.notification.subtype !== 'INITIAL_BUY' && e.notification.subtype !== 'RESUBSCRIBE') {
    return ignored(`${e.notification.notificationType} ${e.notification.subtype ?? ''} is not a new purchase`);
  }
  return rows(toDraft(e, transactionOf(e).offerDiscountType === 'FREE_TRIAL' ? 'trial' : 'purchase'));
};

const handlers: Handlers<AppleEvent, Settings> = {
  SUBSCRIBED: initialBuy,
  OFFER_REDEEMED: initialBuy, // the key dedupes it with SUBSCRIBED when both arrive
  DID_RENEW: renewal,
  ONE_TIME_CHARGE: (e) => rows(toDraft(e, 'purchase')),
  REFUND: (e) =>
    transactionOf(e).revocationType === 'FAMILY_REVOKE' ? ignored('family sharing revoked, no money') : rows(toDraft(e, 'refund')),
};

/** The Apple connector, trusting `roots` (Apple Root CA - G3 unless tests replace it). */
export function appleConnector(roots: Buffer[]): Connector<Settings, Verified, AppleEvent> {
  return {
    provider: 'apple',
    settingsSchema: appleSettings,

    async authenticate(delivery, connection) {
      const { signedPayload } = read(appleBody, parseJson(delivery.body));
      const claimed = peek(signedPayload, roots);
      const { bundle_id, app_apple_id } = connection.settings;
      try {
        const verifier = new SignedDataVerifier(roots, false, claimed.environment, bundle_id, app_apple_id ?? claimed.appAppleId);
        const decoded = await verifier.verifyAndDecodeNotification(signedPayload);
        const signedTransaction = decoded.data?.signedTransactionInfo;
        if (!signedTransaction) return { notification: decoded, transaction: null };
        peek(signedTransaction, roots);
        return { notification: decoded, transaction: await verifier.verifyAndDecodeTransaction(signedTransaction) };
      } catch (err) {
        throw err instanceof Refusal ? err : unauthenticated(rejectionReason(err));
      }
    },

    parse(verified) {
      return [
        {
          notification: read(notification, verified.notification),
          transaction: verified.transaction && read(transaction, verified.transaction),
        },
      ];
    },

    async map(event, ctx) {
      const environment = event.notification.data?.environment;
      const wanted = ctx.settings.environment;
      if (wanted !== 'both' && environment?.toLowerCase() !== wanted) return ignored(`${environment} excluded by the connection`);
      if (event.transaction?.inAppOwnershipType === 'FAMILY_SHARED') return ignored('family-shared transaction');
      return mapByType(handlers, event.notification.notificationType, event, ctx);
    },
  };
}

/**
 * The unverified claims needed to set the verifier up, plus the checks Apple's library
 * leaves out: ES256 only, and the root sent in x5c must be the pinned one.
 */
function peek(jws: string, roots: Buffer[]): { environment: Environment.SANDBOX | Environment.PRODUCTION; appAppleId?: number } {
  const [headerPart, payloadPart] = jws.split('.');
  let jwsHeader: { alg?: unknown; x5c?: unknown };
  let payload: { data?: { environment?: unknown; appAppleId?: unknown }; environment?: unknown };
  try {
    jwsHeader = JSON.parse(Buffer.from(headerPart ?? '', 'base64url').toString('utf8'));
    payload = JSON.parse(Buffer.from(payloadPart ?? '', 'base64url').toString('utf8'));
  } catch {
    throw unauthenticated('signature_mismatch');
  }
  const x5c = Array.isArray(jwsHeader.x5c) ? jwsHeader.x5c : [];
  const sentRoot = typeof x5c[2] === 'string' ? Buffer.from(x5c[2], 'base64') : null;
  if (jwsHeader.alg !== 'ES256' || x5c.length !== 3 || !sentRoot || !roots.some((r) => r.equals(sentRoot))) {
    throw unauthenticated('certificate_chain_invalid');
  }
  // Notifications carry the environment in `data`, transactions at the top level.
  const environment = payload.data?.environment ?? payload.environment;
  if (environment !== Environment.SANDBOX && environment !== Environment.PRODUCTION) {
    throw unauthenticated('environment_invalid');
  }
  const appAppleId = payload.data?.appAppleId;
  return { environment, appAppleId: typeof appAppleId === 'number' ? appAppleId : undefined };
}

function rejectionReason(err: unknown): string {
  if (!(err instanceof VerificationException)) return 'signature_mismatch';
  switch (err.status) {
    case VerificationStatus.INVALID_APP_IDENTIFIER:
      return 'bundle_id_mismatch';
    case VerificationStatus.INVALID_ENVIRONMENT:
      return 'environment_mismatch';
    case VerificationStatus.INVALID_CERTIFICATE:
    case VerificationStatus.INVALID_CHAIN_LENGTH:
      return 'certificate_chain_invalid';
    default:
      return 'signature_mismatch';
  }
}

/**
 * DID_RENEW is a renewal, except the first paid charge after a free trial: Apple has no
 * conversion flag, so a trial row for the subscription's original transaction decides.
 */
async function renewal(e: AppleEvent, ctx: MapContext<Settings>): Promise<Mapped> {
  const tx = transactionOf(e);
  const key = transactionKey('apple', tx.transactionId);
  const original = tx.originalTransactionId ?? tx.transactionId;
  const conversion = transactionKey('apple', 'first-charge', original);
  const converted = await ctx.reference(conversion);
  const isConversion = converted === key || (converted === null && (await ctx.hasLedgerRow('trial', transactionKey('apple', original))));
  if (!isConversion) return rows(toDraft(e, 'renewal'));
  return { rows: [toDraft(e, 'purchase')], references: [{ key: conversion, transactionId: key }] };
}

function transactionOf(e: AppleEvent) {
  return read(transaction, e.transaction);
}

function toDraft(e: AppleEvent, eventType: LedgerEventType): LedgerDraft {
  const tx = transactionOf(e);
  const refund = eventType === 'refund';
  // revocationPercentage is in milliunits: 100000 is a full refund.
  const share = refund && tx.revocationPercentage != null ? tx.revocationPercentage / 100_000 : 1;
  // `price` is in milliunits of `currency` (1000 = 1 unit), net of offers, times quantity.
  const paid = money(((tx.price ?? 0) / 1000) * share, tx.currency);
  const transactionId = transactionKey('apple', tx.transactionId);
  const occurredMs = (refund ? tx.revocationDate : tx.purchaseDate) ?? e.notification.signedDate;
  return {
    eventType,
    transactionId,
    // The app passes the install ID as appAccountToken; anything but a UUID is not one.
    externalUserId: uuidOrNull(tx.appAccountToken),
    amount: amountFor(eventType, paid.amount),
    currency: paid.currency,
    source: 'apple',
    clickToken: null,
    code: null,
    sandbox: e.notification.data?.environment === Environment.SANDBOX,
    occurredAt: new Date(read(z.number(), occurredMs)),
    refundOf: refund ? refundTargets(transactionId, optionalKey('apple', tx.originalTransactionId)) : undefined,
  };
}
