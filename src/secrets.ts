import { createHash, createHmac, createSecretKey, type KeyObject, randomBytes, randomUUID, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;

export const newId = (): string => randomUUID();

/** A random credential with a readable prefix: sk_ API keys, pk_ pixel keys. */
export function newToken(prefix: string, bytes = 24): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

/** API keys and session tokens are random, so a plain SHA-256 is a sufficient stored hash. */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** The HMAC key of each secret, made once: a string key is converted again on every HMAC. */
const hmacKeys = new Map<string, KeyObject>();

export function hmacKey(secret: string): KeyObject {
  let key = hmacKeys.get(secret);
  if (!key) {
    key = createSecretKey(Buffer.from(secret));
    hmacKeys.set(secret, key);
  }
  return key;
}

/** Keyed hash (HMAC-SHA256) for values that must not be stored raw, such as IPs. */
export function keyedHash(secret: string, value: string, encoding: 'hex' | 'base64url' = 'hex'): string {
  return createHmac('sha256', hmacKey(secret)).update(value).digest(encoding);
}

/** Constant-time comparison of two strings of any length. */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}

const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

/** Password hash: scrypt with a random salt, stored as `scrypt$N$r$p$salt$hash`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, 32, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return timingSafeEqual(actual, expected);
}

/** The credential of an `Authorization: Bearer <credential>` header value (scheme in any case), trimmed. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const m = /^Bearer\s+(.+)$/i.exec(authorization ?? '');
  return m?.[1]?.trim() || undefined;
}
