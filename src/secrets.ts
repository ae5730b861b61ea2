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

/**
 * OWASP's minimum for scrypt (N=2^17, r=8, p=1): 128 * N * r = 128 MiB a hash, so maxmem is raised
 * above it, and at most SCRYPT_AT_ONCE hashes run at once (each holds a libuv thread and 128 MiB).
 */
const SCRYPT = { N: 2 ** 17, r: 8, p: 1, maxmem: 160 * 1024 * 1024 };
const SCRYPT_AT_ONCE = 2;

/** Tests only (TEST_SCRYPT_N, refused outside NODE_ENV=test): a cheaper N for this process's new hashes. */
export function useTestScryptCost(n: number | undefined): void {
  if (n) SCRYPT.N = n;
}

/** A hash of no password with today's parameters: checked when an email is unknown, so both failures take as long. */
export function unmatchableHash(): string {
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, 'AAAAAAAAAAAAAAAAAAAAAA==', 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='].join('$');
}
/** Stored parameters needing more memory than today's are refused rather than run (a hash's memory stays bounded). */
const SCRYPT_MAX_BYTES = 128 * 2 ** 17 * 8;

let scryptRunning = 0;
const scryptWaiting: (() => void)[] = [];

/** Runs one scrypt when fewer than SCRYPT_AT_ONCE are running, else waits its turn. */
async function boundedScrypt(password: string, salt: Buffer, len: number, opts: object): Promise<Buffer> {
  if (scryptRunning >= SCRYPT_AT_ONCE) await new Promise<void>((resolve) => scryptWaiting.push(resolve));
  else scryptRunning++;
  try {
    return await scryptAsync(password, salt, len, opts);
  } finally {
    const next = scryptWaiting.shift();
    if (next) next();
    else scryptRunning--;
  }
}

/** Password hash: scrypt with a random salt, stored with its parameters as `scrypt$N$r$p$salt$hash`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await boundedScrypt(password, salt, 32, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

/** Checks a password against a stored hash made with any parameters up to today's (older, cheaper ones too). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const [N, R, P] = [Number(n), Number(r), Number(p)];
  const valid = Number.isInteger(N) && N > 1 && (N & (N - 1)) === 0 && R >= 1 && P >= 1 && P <= 4 && 128 * N * R <= SCRYPT_MAX_BYTES;
  if (!valid) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await boundedScrypt(password, Buffer.from(salt, 'base64'), expected.length, { N, r: R, p: P, maxmem: SCRYPT.maxmem });
  return timingSafeEqual(actual, expected);
}

/** Whether a stored hash was made with other parameters than today's: hashed again at the next successful login. */
export function passwordNeedsRehash(stored: string): boolean {
  const [scheme, n, r, p] = stored.split('$');
  return scheme !== 'scrypt' || Number(n) !== SCRYPT.N || Number(r) !== SCRYPT.r || Number(p) !== SCRYPT.p;
}

/** The credential of an `Authorization: Bearer <credential>` header value (scheme in any case), trimmed. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const m = /^Bearer\s+(.+)$/i.exec(authorization ?? '');
  return m?.[1]?.trim() || undefined;
}
