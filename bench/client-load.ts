import { createRequire } from 'node:module';

type Request = { method: string; path: string; headers: Record<string, string>; body?: string };
type LoadOptions = {
  url: string;
  connections: number;
  duration: number;
  requests: { method: 'POST'; path: string; setupRequest(req: Request): Request }[];
};
type LoadResult = { '2xx': number; non2xx: number; errors: number; duration: number; latency: { p50: number; p99: number } };
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: LoadOptions) => Promise<LoadResult>;

/**
 * A fresh client address per request: 10.0.0.1, 10.0.0.2, … (sent as X-Forwarded-For, so the
 * service's per-IP limit stays on, as `npm start` runs it, without one address hitting it).
 */
let clients = 0;
export const nextClientAddress = () => {
  const n = ++clients;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
};

/**
 * One load of POST `path` for `seconds` against `base`, each request from its own address and with
 * its own body; every request must be answered 2xx.
 */
export const clientLoad = (base: string, path: string, body: () => object, connections: number, seconds: number) => async () => {
  const r = await autocannon({
    url: base,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path,
        setupRequest: (req) => ({
          ...req,
          headers: { ...req.headers, 'content-type': 'application/json', 'x-forwarded-for': nextClientAddress() },
          body: JSON.stringify(body()),
        }),
      },
    ],
  });
  if (r['2xx'] === 0 || r.non2xx > 0 || r.errors > 0) throw new Error(`${base}${path}: ${JSON.stringify({ ok: r['2xx'], non2xx: r.non2xx, errors: r.errors })}`);
  return { answered: r['2xx'], duration: r.duration, p50: r.latency.p50, p99: r.latency.p99 };
};
