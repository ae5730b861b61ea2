import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { destroyTestService, type TestService } from '../../helpers/harness';
import { createPortalUser, portalLogin } from '../../portal/helpers';

/**
 * What the outbound webhook tests share: a DNS server answering A and AAAA from a zone the test
 * changes (DNS_SERVERS), a loopback receiver recording what it is sent, and portal calls.
 */

export { startDnsZone as startDns } from '../../helpers/dns-zone';

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

/** A portal user of the brand, signed in: its portal calls. */
export async function signedInPortal(t: TestService, brandId: string): Promise<PortalCalls> {
  await createPortalUser(t, brandId, 'a@acme.test');
  return portalCalls(t, await portalLogin(t, 'a@acme.test'));
}

/** Stops the service, then the receiver and the DNS server it was sending to. */
export async function stopAll(t: TestService, receiver: { close(): Promise<void> }, dns: { close(): Promise<unknown> }) {
  await destroyTestService(t);
  await receiver.close();
  await dns.close();
}

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
