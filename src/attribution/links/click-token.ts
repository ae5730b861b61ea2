import { createHmac, randomFillSync, timingSafeEqual } from 'node:crypto';
import { hmacKey } from '../../secrets';

/**
 * Click tokens: `svc_` + base64url(link id (8 bytes) ‖ nonce (12) ‖ HMAC tag (12)): they name their
 * link without a look-up and cannot be forged without SECRET_KEY. A bot's token is tagged under
 * another key, so `clickTokenLinkId` never verifies it and it credits nothing (docs/api.md).
 */
export const CLICK_TOKEN_PREFIX = 'svc_';

const LINK_ID_BYTES = 8;
const NONCE_BYTES = 12;
const TAG_BYTES = 12;
const PAYLOAD_BYTES = LINK_ID_BYTES + NONCE_BYTES;
const TOKEN_BYTES = PAYLOAD_BYTES + TAG_BYTES;

function tag(secret: string, payload: Buffer): Buffer {
  return createHmac('sha256', hmacKey(secret)).update(payload).digest().subarray(0, TAG_BYTES);
}

const botSecret = (secret: string) => `bot:${secret}`;

/**
 * Nonces come from a block of random bytes filled 4 KiB at a time: one system call
 * serves hundreds of clicks instead of one each. Every byte is used once.
 */
const nonces = { block: Buffer.alloc(NONCE_BYTES * 341), used: Number.POSITIVE_INFINITY };

function copyNonce(target: Buffer, offset: number): void {
  if (nonces.used + NONCE_BYTES > nonces.block.length) {
    randomFillSync(nonces.block);
    nonces.used = 0;
  }
  nonces.block.copy(target, offset, nonces.used, nonces.used + NONCE_BYTES);
  nonces.used += NONCE_BYTES;
}

export function mintClickToken(secret: string, linkId: number, { bot = false } = {}): string {
  const token = Buffer.allocUnsafe(TOKEN_BYTES);
  const payload = token.subarray(0, PAYLOAD_BYTES);
  payload.writeBigUInt64BE(BigInt(linkId), 0);
  copyNonce(payload, LINK_ID_BYTES);
  tag(bot ? botSecret(secret) : secret, payload).copy(token, PAYLOAD_BYTES);
  return CLICK_TOKEN_PREFIX + token.toString('base64url');
}

/** The id of the link that minted `token`, or null when the token is malformed or its tag does not verify. */
export function clickTokenLinkId(secret: string, token: string): number | null {
  if (!token.startsWith(CLICK_TOKEN_PREFIX)) return null;
  const encoded = token.slice(CLICK_TOKEN_PREFIX.length);
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return null;
  const bytes = Buffer.from(encoded, 'base64url');
  if (bytes.length !== TOKEN_BYTES) return null;
  const payload = bytes.subarray(0, PAYLOAD_BYTES);
  if (!timingSafeEqual(bytes.subarray(PAYLOAD_BYTES), tag(secret, payload))) return null;
  const linkId = payload.readBigUInt64BE(0);
  return linkId <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(linkId) : null;
}
