import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SvcClient, SvcConfig } from '../../sdk/react-native/src/index';

/**
 * Runs the language-neutral behaviour cases of sdk/vectors (format: sdk/vectors/README.md)
 * against the React Native SDK with a stub fetch. Answers every difference found, as text.
 */

export const VECTORS_DIR = new URL('../../sdk/vectors/', import.meta.url);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Answer = { status: number; body: Json } | { status: number; text: string } | { network_error: true } | { killed: true };
type ExpectedRequest = { method: string; path: string; body: Json; answer: Answer };
type Call = {
  call: 'trackInstall' | 'trackPurchase' | 'getInstallId' | 'getAttribution' | 'wouldReadClipboard' | 'trackOpen';
  args: Json;
  concurrent?: number;
  requests: ExpectedRequest[];
  result: Json;
  logged?: boolean;
};
export type Vector = {
  name: string;
  description: string;
  config: Omit<SvcConfig, 'storage' | 'clipboard' | 'log'>;
  clipboard?: string | { fails: true } | null;
  clipboard_has_string?: boolean;
  storage: { fails?: true | 'reads' | 'writes'; before: Record<string, Json>; after: Record<string, Json> };
  launches: Call[][];
  clipboard_reads?: number;
};

export function loadVectors(): Vector[] {
  return readdirSync(VECTORS_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(VECTORS_DIR.pathname, f), 'utf8')) as Vector);
}

const PLACEHOLDER = /^\{\{(uuid|timestamp)(?::([a-z0-9_]+))?\}\}$/;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Placeholders bound so far in one vector, by name. */
type Bindings = Map<string, string>;

/** Compares `actual` with `expected` (placeholders bind or must equal their binding); answers the differences. */
export function match(expected: Json, actual: unknown, where: string, bound: Bindings): string[] {
  if (typeof expected === 'string') {
    const p = PLACEHOLDER.exec(expected);
    if (p) {
      if (typeof actual !== 'string') return [`${where}: expected a ${p[1]}, got ${JSON.stringify(actual)}`];
      const shape = p[1] === 'uuid' ? UUID_V4 : TIMESTAMP;
      if (!shape.test(actual) || (p[1] === 'timestamp' && Number.isNaN(Date.parse(actual)))) {
        return [`${where}: ${JSON.stringify(actual)} is not a ${p[1]}`];
      }
      if (!p[2]) return [];
      const key = `${p[1]}:${p[2]}`;
      const before = bound.get(key);
      if (before === undefined) bound.set(key, actual);
      else if (before !== actual) return [`${where}: ${expected} was ${before}, now ${actual}`];
      return [];
    }
  }
  if (expected === null || typeof expected !== 'object') {
    return Object.is(expected, actual) ? [] : [`${where}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) {
      return [`${where}: expected ${expected.length} items, got ${JSON.stringify(actual)}`];
    }
    return expected.flatMap((e, i) => match(e, actual[i], `${where}[${i}]`, bound));
  }
  if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return [`${where}: expected an object, got ${JSON.stringify(actual)}`];
  const a = actual as Record<string, unknown>;
  const keys = new Set([...Object.keys(expected), ...Object.keys(a)]);
  return [...keys].flatMap((k) =>
    k in expected ? (k in a ? match(expected[k]!, a[k], `${where}.${k}`, bound) : [`${where}.${k}: missing`]) : [`${where}.${k}: not expected (${JSON.stringify(a[k])})`],
  );
}

/** Fills bound placeholders into an answer the stub gives. */
function fill(value: Json, bound: Bindings): Json {
  if (typeof value === 'string') {
    const p = PLACEHOLDER.exec(value);
    return p?.[2] ? (bound.get(`${p[1]}:${p[2]}`) ?? value) : value;
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, bound));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, bound)]));
  return value;
}

export type Sdk = { createClient(config: SvcConfig): SvcClient };

/** Runs one vector; answers its differences (none: it passes). */
export async function runVector(v: Vector, sdk: Sdk): Promise<string[]> {
  const problems: string[] = [];
  const bound: Bindings = new Map();
  const store = new Map<string, string>(Object.entries(v.storage.before).map(([k, val]) => [k, typeof val === 'string' ? val : JSON.stringify(val)]));
  const broken = async () => {
    throw new Error('storage unavailable');
  };
  const fails = v.storage.fails;
  // Each launch has its own view of the store: once its app is killed, it reads and writes nothing.
  const storageFor = (launch: { killed: boolean }) => {
    const dead = async () => {
      throw new Error('the app was killed');
    };
    return {
      getItem: fails === true || fails === 'reads' ? broken : async (key: string) => (launch.killed ? dead() : (store.get(key) ?? null)),
      setItem:
        fails === true || fails === 'writes'
          ? broken
          : async (key: string, value: string) => {
              if (launch.killed) return dead();
              store.set(key, value);
            },
    };
  };
  let clipboardReads = 0;
  const clipboard =
    v.clipboard === undefined || v.clipboard === null
      ? undefined
      : {
          getString: async () => {
            clipboardReads++;
            if (typeof v.clipboard === 'object') throw new Error('clipboard unavailable');
            return v.clipboard as string;
          },
          ...(v.clipboard_has_string === undefined ? {} : { hasString: async () => v.clipboard_has_string === true }),
        };
  // Requests left hanging by a killed launch: failed at the end, so that nothing of it outlives the case.
  const hung: (() => void)[] = [];
  let onKill: (() => void) | undefined;
  const endpoint = (v.config.endpoint ?? '').replace(/\/+$/, '');

  const realFetch = globalThis.fetch;
  let expected: ExpectedRequest[] = [];
  let where = '';
  globalThis.fetch = (async (url: string, init: { method: string; body: string }) => {
    const next = expected.shift();
    if (!next) {
      problems.push(`${where}: unexpected request ${init.method} ${url} ${init.body}`);
      throw new TypeError('Network request failed');
    }
    const at = `${where} request ${next.path}`;
    if (init.method !== next.method) problems.push(`${at}: method ${init.method}`);
    if (url !== `${endpoint}${next.path}`) problems.push(`${at}: url ${url}`);
    problems.push(...match(next.body, JSON.parse(init.body), `${at} body`, bound));
    if ('network_error' in next.answer) throw new TypeError('Network request failed');
    if ('killed' in next.answer) {
      onKill?.();
      return new Promise((_resolve, reject) => hung.push(() => reject(new TypeError('Network request failed'))));
    }
    if ('text' in next.answer) return new Response(next.answer.text, { status: next.answer.status, headers: { 'content-type': 'text/html' } });
    return new Response(JSON.stringify(fill(next.answer.body, bound)), { status: next.answer.status, headers: { 'content-type': 'application/json' } });
  }) as unknown as typeof fetch;

  try {
    for (const [n, launch] of v.launches.entries()) {
      let logs = 0;
      const state = { killed: false };
      const client = sdk.createClient({ ...v.config, storage: storageFor(state), ...(clipboard ? { clipboard } : {}), log: () => void logs++ });
      for (const [i, call] of launch.entries()) {
        where = `${v.name} launch ${n + 1} call ${i + 1} ${call.call}`;
        if (state.killed) {
          problems.push(`${where}: a call after the app was killed`);
          break;
        }
        expected = [...call.requests];
        logs = 0;
        const invoke = (): Promise<unknown> => {
          const args = call.args as Record<string, unknown>;
          switch (call.call) {
            case 'getInstallId':
              return client.getInstallId();
            case 'getAttribution':
              return client.getAttribution();
            case 'wouldReadClipboard':
              return client.wouldReadClipboard();
            case 'trackOpen':
              return client.trackOpen(args?.url as string);
            case 'trackInstall':
              return client.trackInstall(call.args as never);
            default:
              return client.trackPurchase(call.args as never);
          }
        };
        // A request answered `killed` ends the launch there: the call never settles, its result is not checked.
        const killed = new Promise<'killed'>((resolve) => {
          onKill = () => {
            state.killed = true;
            resolve('killed');
          };
        });
        const results = await Promise.race([Promise.all(Array.from({ length: call.concurrent ?? 1 }, invoke)), killed]);
        onKill = undefined;
        if (expected.length > 0) problems.push(`${where}: requests not made: ${expected.map((r) => r.path).join(', ')}`);
        if (results === 'killed') continue;
        for (const result of results) problems.push(...match(call.result, result, `${where} result`, bound));
        if (call.logged !== undefined && call.logged !== logs > 0) problems.push(`${where}: expected logged ${call.logged}, ${logs} messages`);
      }
    }
  } finally {
    for (const fail of hung) fail();
    // Lets a killed launch's calls end (against a storage that is gone) before fetch is restored.
    await new Promise((resolve) => setTimeout(resolve, 0));
    globalThis.fetch = realFetch;
  }
  const after: Record<string, unknown> = {};
  for (const [k, val] of store) after[k] = typeof v.storage.after[k] === 'string' || v.storage.after[k] === undefined ? val : JSON.parse(val);
  problems.push(...match(v.storage.after, after, `${v.name} storage after`, bound));
  if (v.clipboard_reads !== undefined && v.clipboard_reads !== clipboardReads) {
    problems.push(`${v.name}: expected ${v.clipboard_reads} clipboard reads, got ${clipboardReads}`);
  }
  return problems;
}
