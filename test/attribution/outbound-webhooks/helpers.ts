import { createSocket } from 'node:dgram';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, isIPv6 } from 'node:net';
import { expect } from 'vitest';
import type { TestService } from '../../helpers/harness';

/**
 * What the outbound webhook tests share: a DNS server answering A and AAAA from a zone the test
 * changes (DNS_SERVERS), a loopback receiver recording what it is sent, and portal calls.
 */

export type Zone = Map<string, { A?: string[]; AAAA?: string[] }>;

export async function startDns() {
  const zone: Zone = new Map();
  /** Called with each question's name after it is answered (a test changes the zone there). */
  const hooks: { answered?: (name: string) => void } = {};
  const socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    const { reply, name } = answer(query, zone);
    socket.send(reply, peer.port, peer.address);
    hooks.answered?.(name);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address() as AddressInfo;
  return { zone, hooks, server: `127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
}

function ipv6Bytes(address: string): Buffer {
  const [head = '', tail = ''] = address.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => {
    out.writeUInt16BE(Number.parseInt(g, 16), i * 2);
  });
  return out;
}

function answer(query: Buffer, zone: Zone): { reply: Buffer; name: string } {
  const labels: string[] = [];
  let at = 12;
  while (query[at]! > 0) {
    labels.push(query.subarray(at + 1, at + 1 + query[at]!).toString());
    at += query[at]! + 1;
  }
  const qtype = query.readUInt16BE(at + 1);
  const question = query.subarray(12, at + 5);
  const records = zone.get(labels.join('.').toLowerCase());
  const rdatas: Buffer[] = [];
  if (qtype === 1) for (const a of records?.A ?? []) rdatas.push(Buffer.from(a.split('.').map(Number)));
  if (qtype === 28) for (const a of records?.AAAA ?? []) if (isIPv6(a)) rdatas.push(ipv6Bytes(a));
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  header.writeUInt16BE(0x8180 | (records ? 0 : 3), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(rdatas.length, 6);
  const answers = rdatas.map((rdata) => {
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0);
    rr.writeUInt16BE(qtype, 2);
    rr.writeUInt16BE(1, 4);
    rr.writeUInt32BE(0, 6);
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([rr, rdata]);
  });
  return { reply: Buffer.concat([header, question, ...answers]), name: labels.join('.').toLowerCase() };
}

export type Received = { headers: IncomingMessage['headers']; body: string; path: string; at: number };

/** A loopback receiver: records every request and answers with `respond` (default 200 "ok"). */
export async function startReceiver(respond?: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
  const received: Received[] = [];
  const state = { respond };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ headers: req.headers, body, path: req.url ?? '/', at: Date.now() });
      if (state.respond) state.respond(req, res, body);
      else res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    received,
    state,
    port,
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Portal calls with PATCH too, from the service's own origin. */
export function portalCalls(t: TestService, cookie: string) {
  const url = (path: string) => `/api/client/attribution${path}`;
  return {
    get: (path: string) => t.request({ method: 'GET', url: url(path), headers: { cookie } }),
    send: (method: 'POST' | 'PATCH' | 'DELETE', path: string, payload?: unknown) =>
      t.request({ method, url: url(path), headers: { cookie, origin: t.config.publicBaseUrl }, ...(payload !== undefined ? { payload: payload as object } : {}) }),
  };
}
export type PortalCalls = ReturnType<typeof portalCalls>;

/** Polls until `fn` answers a value `ok` accepts. */
export async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > deadline) {
      expect.fail(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(v).slice(0, 2000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const TEST_ENV = (dnsServer: string) => ({
  DNS_SERVERS: dnsServer,
  WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
  WEBHOOK_REQUIRE_HTTPS: 'false',
});
