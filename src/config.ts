import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';

/**
 * The only module that reads the environment (README.md#configuration).
 * Everything else receives a `Config`.
 */
const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: wholeNumber(0, 65535, 3000),
  HOST: z.string().refine(isHostOrIp, 'must be a host name or an IP address').default('127.0.0.1'),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).default('postgres://localhost:5432/svc'),
  REDIS_URL: z
    .url({ protocol: /^rediss?$/ })
    .refine((v) => /^\/?\d*$/.test(new URL(v).pathname), 'must name a database by its number (/N), if any')
    .default('redis://127.0.0.1:6379'),
  CLICKHOUSE_URL: z.url({ protocol: /^https?$/ }).optional(),
  CLICKHOUSE_DATABASE: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a plain identifier')
    .default('svc'),
  DATA_DIR: z.string().min(1).default('./data'),
  ADMIN_JWT_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  SECRET_KEY: z.string().min(16, 'must be at least 16 characters').optional(),
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** DEMO=0 turns off the demo brand loaded on an empty database outside production. */
  DEMO: z.enum(['0', '1']).default('1'),
  /** Key prefix of every BullMQ queue: lets several deployments or test files share one Redis. */
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_:-]+$/)
    .default('svc'),
  /**
   * Behind a reverse proxy: `true` trusts X-Forwarded-For from any hop, or a comma-separated
   * list of proxy addresses/CIDRs. Decides req.ip (login rate limits, install IP matching), and
   * whether POST /clicks may name the visitor's IP (a redirect application must be listed).
   */
  TRUST_PROXY: z.string().refine(isTrustProxy, 'must be true, false or a comma-separated list of proxy addresses or CIDRs').optional(),
  /** Name servers for domain verification look-ups, `ip` or `ip:port`, comma-separated; unset: the system's. */
  DNS_SERVERS: z
    .string()
    .transform((v) => v.split(',').map((s) => s.trim()))
    .pipe(z.array(z.string().refine(isDnsServer, 'must be a comma-separated list of ip or ip:port')))
    .optional(),
  /** Host names no brand may add as its domain in the portal, comma-separated (docs/api.md, "Domains"). */
  RESERVED_HOSTNAMES: z
    .string()
    .transform((v) => v.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean))
    .optional(),
  /**
   * Tests only: base64 DER of the root certificate the Apple connector trusts instead of the
   * pinned Apple Root CA - G3, so tests can sign with a chain they make. Refused unless NODE_ENV=test.
   */
  TEST_APPLE_ROOT_CA: z.base64().min(1).optional(),
  /** Tests only: scrypt's N for portal passwords instead of 2^17 (a test suite logs in hundreds of times). */
  TEST_SCRYPT_N: z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .refine((n) => n >= 2 && n <= 2 ** 17 && (n & (n - 1)) === 0, 'must be a power of 2 up to 131072')
    .optional(),
  // A store down or hung never holds a request (docs/operations.md#a-store-down-or-hung): timeouts in milliseconds.
  REDIS_COMMAND_TIMEOUT_MS: millis(2000),
  PG_STATEMENT_TIMEOUT_MS: millis(4000),
  PG_CONNECT_TIMEOUT_MS: millis(2000),
  /**
   * Each read from a ClickHouse server (CLICKHOUSE_URL) on the request path; an answer makes at most
   * three in a row (a creators page past the end, period=all, uncached), so three stay under 5 s.
   * Embedded ClickHouse cannot hang apart from the process.
   */
  CLICKHOUSE_QUERY_TIMEOUT_MS: millis(1500),
  HEALTH_PROBE_TIMEOUT_MS: millis(1000),
  /** Fastify's requestTimeout: the whole request (headers and body) must arrive within it. */
  REQUEST_TIMEOUT_MS: millis(10_000),
  /** Requests a minute (docs/operations.md#rate-limits); 0 turns the limit off. */
  RATE_LIMIT_DATA_API: perMinute(600),
  RATE_LIMIT_PUBLIC_IP: perMinute(6000),
  RATE_LIMIT_PIXEL_KEY: perMinute(0),
  /** Wrong Data API keys a minute per client IP (docs/hardening.md); 0 turns the limit off. */
  RATE_LIMIT_FAILED_KEYS: perMinute(60),
  /** Portal requests a minute per session; 0 turns the limit off. */
  RATE_LIMIT_PORTAL: perMinute(600),
  /** When set, GET /metrics requires `Authorization: Bearer <METRICS_TOKEN>`; unset, it is open. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Redis memory the install IP match may hold, in MiB (docs/operations.md). */
  IP_MATCH_MEMORY_MB: wholeNumber(1, 4096, 64),
  /** Memory for answers of reads over facts, in MiB (src/reads/pipeline.ts); 0 turns the cache off. */
  READ_CACHE_MB: wholeNumber(0, 4096, 64),
  /** /healthz lists `ingestion_lag` past this age of the oldest fact not yet queryable. */
  INGESTION_LAG_DEGRADED_SECONDS: wholeNumber(1, 86_400, 300),
  /** /healthz lists `queue_stalled:<kind>` when a queue's oldest waiting job is this old. */
  QUEUE_STALLED_SECONDS: wholeNumber(1, 86_400, 120),
  /** Outbound webhooks (docs/webhooks.md, "Receiving webhooks"). */
  WEBHOOK_TIMEOUT_MS: millis(15_000),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .regex(/^\d+(,\d+)*$/, 'must be a comma-separated list of whole seconds')
    .default('5,300,1800,7200,18000,36000,36000')
    .transform((v) => v.split(',').map(Number))
    .pipe(z.array(z.number().max(7 * 86_400)).max(50)),
  WEBHOOK_DISABLE_AFTER_HOURS: wholeNumber(1, 8760, 120),
  WEBHOOK_RETENTION_DAYS: wholeNumber(1, 3650, 30),
  WEBHOOK_MAX_ENDPOINTS: wholeNumber(1, 1000, 10),
  WEBHOOK_REQUIRE_HTTPS: z.enum(['true', 'false']).default('true'),
  /** CIDRs whose addresses a webhook URL may reach although private (development, tests). */
  WEBHOOK_ALLOWED_NETWORKS: z
    .string()
    .transform((v) => v.split(',').map((s) => s.trim()))
    .pipe(z.array(z.string().refine(isCidr, 'must be a comma-separated list of CIDRs (address/bits)')))
    .optional(),
});

/**
 * A whole number in [min, max], written in digits only: a blank, `1e3`, `Infinity` or `0x10`
 * stops the start (coerced, a blank would read as 0, which turns a rate limit off).
 */
function wholeNumber(min: number, max: number, fallback: number) {
  return z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(min).max(max))
    .default(fallback);
}

function millis(fallback: number) {
  return wholeNumber(1, 600_000, fallback);
}

function perMinute(fallback: number) {
  return wholeNumber(0, 1_000_000_000, fallback);
}

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
const HOST_NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);

/** An address to listen on: an IP address or a host name (`localhost`, `svc.internal`). */
function isHostOrIp(value: string): boolean {
  return isIP(value) !== 0 || (value.length <= 253 && HOST_NAME.test(value));
}

/** TRUST_PROXY as Fastify takes it: `true`, `false`, or addresses, CIDRs (`/bits` or `/netmask`) and proxy-addr's names. */
function isTrustProxy(value: string): boolean {
  if (value === 'true' || value === 'false') return true;
  return value.split(',').every((entry) => {
    const proxy = entry.trim();
    if (['loopback', 'linklocal', 'uniquelocal'].includes(proxy)) return true;
    const [address = '', range, ...rest] = proxy.split('/');
    const family = isIP(address);
    if (family === 0 || rest.length > 0) return false;
    if (range === undefined) return true;
    if (/^\d+$/.test(range)) return Number(range) <= (family === 4 ? 32 : 128);
    return family === 4 && isIP(range) === 4;
  });
}

export type Config = {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  databaseUrl: string;
  redisUrl: string;
  clickhouseUrl: string | undefined;
  clickhouseDatabase: string;
  dataDir: string;
  adminJwtSecret: string;
  secretKey: string;
  publicBaseUrl: string;
  logLevel: string;
  demo: boolean;
  queuePrefix: string;
  dnsServers: string[] | undefined;
  /** Host names the portal refuses as a brand's domain (RESERVED_HOSTNAMES). */
  reservedHostnames: string[];
  trustProxy: boolean | string;
  /** Set only under NODE_ENV=test (TEST_SCRYPT_N): scrypt's N for portal passwords instead of 2^17. */
  testScryptN: number | undefined;
  /** Set only under NODE_ENV=test (TEST_APPLE_ROOT_CA): replaces the pinned Apple root. */
  testAppleRootCa: Buffer | undefined;
  timeouts: { redisCommandMs: number; pgStatementMs: number; pgConnectMs: number; clickhouseQueryMs: number; healthProbeMs: number; requestMs: number };
  /** Requests a minute; 0: off. */
  rateLimits: { dataApi: number; publicIp: number; pixelKey: number; failedKeys: number; portal: number };
  /** Bearer token of GET /metrics; undefined: open. */
  metricsToken: string | undefined;
  ipMatchMemoryBytes: number;
  readCacheBytes: number;
  degradedAfter: { ingestionLagSeconds: number; queueStalledSeconds: number };
  webhooks: WebhookConfig;
};

/** Outbound webhooks' settings (WEBHOOK_*). */
export type WebhookConfig = {
  timeoutMs: number;
  /** Seconds to wait before each retry: N waits make N+1 attempts. */
  retrySchedule: number[];
  disableAfterHours: number;
  retentionDays: number;
  maxEndpoints: number;
  requireHttps: boolean;
  /** CIDRs exempt from the address rules; empty by default. */
  allowedNetworks: string[];
};

export class ConfigError extends Error {}

/** Parses an environment into a Config; throws ConfigError naming the first bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings count as unset, as in most twelve-factor tooling.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  // The input kept in each issue tells a variable given a bad value from one not given.
  const parsed = envSchema.safeParse(cleaned, { reportInput: true });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? 'environment');
    throw new ConfigError(`Invalid configuration: ${name} ${describe(issue)} (got ${JSON.stringify(env[name] ?? null)})`);
  }
  const e = parsed.data;
  const dataDir = resolve(e.DATA_DIR);
  if (e.TEST_APPLE_ROOT_CA && e.NODE_ENV !== 'test') {
    throw new ConfigError('Invalid configuration: TEST_APPLE_ROOT_CA is honoured only when NODE_ENV=test');
  }
  if (e.TEST_SCRYPT_N && e.NODE_ENV !== 'test') {
    throw new ConfigError('Invalid configuration: TEST_SCRYPT_N is honoured only when NODE_ENV=test');
  }
  const secrets = resolveSecrets(e.NODE_ENV, dataDir, e.ADMIN_JWT_SECRET, e.SECRET_KEY);
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    databaseUrl: withDefaultUser(e.DATABASE_URL),
    redisUrl: e.REDIS_URL,
    clickhouseUrl: e.CLICKHOUSE_URL,
    clickhouseDatabase: e.CLICKHOUSE_DATABASE,
    dataDir,
    adminJwtSecret: secrets.adminJwtSecret,
    secretKey: secrets.secretKey,
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://${e.HOST}:${e.PORT}`).replace(/\/+$/, ''),
    logLevel: e.LOG_LEVEL,
    demo: e.DEMO === '1',
    queuePrefix: e.QUEUE_PREFIX,
    dnsServers: e.DNS_SERVERS,
    reservedHostnames: e.RESERVED_HOSTNAMES ?? [],
    trustProxy: e.TRUST_PROXY === undefined || e.TRUST_PROXY === 'false' ? false : e.TRUST_PROXY === 'true' || e.TRUST_PROXY,
    testAppleRootCa: e.TEST_APPLE_ROOT_CA ? Buffer.from(e.TEST_APPLE_ROOT_CA, 'base64') : undefined,
    testScryptN: e.TEST_SCRYPT_N,
    timeouts: {
      redisCommandMs: e.REDIS_COMMAND_TIMEOUT_MS,
      pgStatementMs: e.PG_STATEMENT_TIMEOUT_MS,
      pgConnectMs: e.PG_CONNECT_TIMEOUT_MS,
      clickhouseQueryMs: e.CLICKHOUSE_QUERY_TIMEOUT_MS,
      healthProbeMs: e.HEALTH_PROBE_TIMEOUT_MS,
      requestMs: e.REQUEST_TIMEOUT_MS,
    },
    rateLimits: {
      dataApi: e.RATE_LIMIT_DATA_API,
      publicIp: e.RATE_LIMIT_PUBLIC_IP,
      pixelKey: e.RATE_LIMIT_PIXEL_KEY,
      failedKeys: e.RATE_LIMIT_FAILED_KEYS,
      portal: e.RATE_LIMIT_PORTAL,
    },
    metricsToken: e.METRICS_TOKEN,
    ipMatchMemoryBytes: e.IP_MATCH_MEMORY_MB * 1024 * 1024,
    readCacheBytes: e.READ_CACHE_MB * 1024 * 1024,
    degradedAfter: { ingestionLagSeconds: e.INGESTION_LAG_DEGRADED_SECONDS, queueStalledSeconds: e.QUEUE_STALLED_SECONDS },
    webhooks: {
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      retrySchedule: e.WEBHOOK_RETRY_SCHEDULE,
      disableAfterHours: e.WEBHOOK_DISABLE_AFTER_HOURS,
      retentionDays: e.WEBHOOK_RETENTION_DAYS,
      maxEndpoints: e.WEBHOOK_MAX_ENDPOINTS,
      requireHttps: e.WEBHOOK_REQUIRE_HTTPS === 'true',
      allowedNetworks: e.WEBHOOK_ALLOWED_NETWORKS ?? [],
    },
  };
}

/** `address/bits`, IPv4 or IPv6. */
function isCidr(value: string): boolean {
  const [address = '', bits, ...rest] = value.split('/');
  const family = isIP(address);
  return family !== 0 && rest.length === 0 && bits !== undefined && /^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/** The forms `dns.Resolver.setServers` takes: `1.2.3.4`, `1.2.3.4:53`, `::1`, `[::1]:53`. */
function isDnsServer(value: string): boolean {
  const m = /^\[(.+)\]:(\d{1,5})$/.exec(value) ?? /^([^:]+):(\d{1,5})$/.exec(value);
  const host = m ? m[1]! : value;
  return isIP(host) !== 0 && (!m || Number(m[2]) <= 65535);
}

/**
 * A URL without a user name connects as the OS user, as libpq does; node-postgres would
 * instead read $USER, which services and CI shells often leave unset.
 */
function withDefaultUser(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  if (url.username) return databaseUrl;
  url.username = userInfo().username;
  return url.toString();
}

function describe(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && issue.input === undefined) return 'is required';
  return issue.message.charAt(0).toLowerCase() + issue.message.slice(1);
}

/**
 * Production must be given both secrets. Elsewhere a random pair is generated once
 * into DATA_DIR/secrets.json so restarts keep admin tokens and click tokens valid.
 */
function resolveSecrets(
  nodeEnv: Config['env'],
  dataDir: string,
  adminJwtSecret: string | undefined,
  secretKey: string | undefined,
): { adminJwtSecret: string; secretKey: string } {
  if (adminJwtSecret && secretKey) return { adminJwtSecret, secretKey };
  if (nodeEnv === 'production') {
    const missing = adminJwtSecret ? 'SECRET_KEY' : 'ADMIN_JWT_SECRET';
    throw new ConfigError(`Invalid configuration: ${missing} is required when NODE_ENV=production`);
  }
  const file = join(dataDir, 'secrets.json');
  let stored: { adminJwtSecret?: string; secretKey?: string } = {};
  try {
    stored = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    stored = {
      adminJwtSecret: randomBytes(32).toString('base64url'),
      secretKey: randomBytes(32).toString('base64url'),
    };
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
  }
  return {
    adminJwtSecret: adminJwtSecret ?? stored.adminJwtSecret!,
    secretKey: secretKey ?? stored.secretKey!,
  };
}
