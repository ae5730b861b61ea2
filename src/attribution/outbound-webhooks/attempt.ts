import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { type AddressRules, checkUrl, UrlRefused } from './addresses';
import type { DeliveryError } from './tables';

/**
 * One HTTP attempt of a delivery. The URL is checked again, and the connection goes to the
 * address that check resolved (no second look-up, no proxy from the environment); redirects are
 * never followed; the answer's body is read to 1 KiB for the log and dropped past a small cap, so
 * a receiver that hangs or answers megabytes costs one attempt and no memory.
 */

const VERSION: string = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')).version;
export const USER_AGENT = `svc-webhooks/${VERSION}`;

export const EXCERPT_BYTES = 1024;
/** Bytes of an answer read before the connection is closed. */
const READ_CAP_BYTES = 64 * 1024;
const MAX_RETRY_AFTER_MS = 24 * 3600 * 1000;

export type AttemptResult = {
  status: number | null;
  error: DeliveryError | null;
  excerpt: string | null;
  durationMs: number;
  /** A 429 or 503's Retry-After, in ms (at most 24 h). */
  retryAfterMs?: number;
};

export type AttemptInput = {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  rules: AddressRules;
};

/** Keep-alive agents per (origin, checked address): a pooled socket always goes where the check said. */
const agents = new Map<string, http.Agent>();
const MAX_AGENTS = 512;

function agentFor(url: URL, address: string): http.Agent {
  const key = `${url.origin}|${address}`;
  let agent = agents.get(key);
  if (!agent) {
    if (agents.size >= MAX_AGENTS) {
      const [oldest, a] = agents.entries().next().value as [string, http.Agent];
      agents.delete(oldest);
      a.destroy();
    }
    // Endpoints of several brands may share a host: as many sockets as attempts in flight (the
    // worker caps each endpoint at 4), kept for reuse rather than closed and opened again.
    const opts = { keepAlive: true, maxSockets: 256, maxFreeSockets: 256, timeout: 60_000, scheduling: 'lifo' as const };
    agent = url.protocol === 'https:' ? new https.Agent(opts) : new http.Agent(opts);
    agents.set(key, agent);
  }
  return agent;
}

/** Closes the pooled connections (shutdown, tests). */
export function closeAgents(): void {
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
}

const TLS_CODES = /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH|ERR_OSSL)/;

export function classify(err: { code?: string; message?: string }): DeliveryError {
  const code = err.code ?? '';
  if (code === 'ETIMEDOUT' || code === 'WEBHOOK_TIMEOUT') return 'timeout';
  if (TLS_CODES.test(code) || /SSL|TLS|certificate/i.test(err.message ?? '')) return 'tls';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  return 'connection';
}

function retryAfter(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const ms = /^\d+$/.test(value.trim()) ? Number(value.trim()) * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, MAX_RETRY_AFTER_MS) : undefined;
}

function excerptOf(chunks: Buffer[]): string | null {
  if (chunks.length === 0) return null;
  const text = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
  // A character cut at the limit decodes as U+FFFD (3 bytes): drop it to stay within 1 KiB. NUL,
  // which Postgres text cannot hold, is kept as U+FFFD.
  let kept = text.replace(/\uFFFD+$/, '').replaceAll('\u0000', '\uFFFD');
  while (Buffer.byteLength(kept) > EXCERPT_BYTES) kept = kept.slice(0, -1);
  return kept;
}

export async function attempt(input: AttemptInput): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let checked: Awaited<ReturnType<typeof checkUrl>>;
  try {
    checked = await checkUrl(input.url, input.rules);
  } catch (err) {
    const error: DeliveryError = err instanceof UrlRefused && err.reason === 'unresolvable' ? 'dns' : 'blocked_address';
    return { status: null, error, excerpt: null, durationMs: elapsed() };
  }
  const { url, address, family } = checked;
  // Every name the connection looks up answers the checked address.
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const done = (r: Omit<AttemptResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...r, durationMs: elapsed() });
    };
    const req = client.request(
      url,
      {
        method: 'POST',
        agent: agentFor(url, address),
        lookup,
        headers: { ...input.headers, 'content-length': String(Buffer.byteLength(input.body)) },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let kept = 0;
        let read = 0;
        const finish = () => {
          const error: DeliveryError | null = status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? 'redirect' : 'http_status';
          const wait = status === 429 || status === 503 ? retryAfter(res.headers['retry-after']) : undefined;
          done({ status, error, excerpt: excerptOf(chunks), ...(wait !== undefined ? { retryAfterMs: wait } : {}) });
        };
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (kept < EXCERPT_BYTES) {
            chunks.push(chunk.subarray(0, EXCERPT_BYTES - kept));
            kept += Math.min(chunk.length, EXCERPT_BYTES - kept);
          }
          if (read > READ_CAP_BYTES) {
            // The status is known: the rest of a large answer is not worth its bytes.
            finish();
            res.destroy();
            req.destroy();
          }
        });
        res.on('end', finish);
        res.on('error', () => finish());
        res.on('close', finish);
      },
    );
    const timer = setTimeout(() => {
      const err = Object.assign(new Error('webhook attempt timed out'), { code: 'WEBHOOK_TIMEOUT' });
      done({ status: null, error: 'timeout', excerpt: null });
      req.destroy(err);
    }, input.timeoutMs);
    req.on('error', (err) => done({ status: null, error: classify(err as { code?: string }), excerpt: null }));
    req.end(input.body);
  });
}
