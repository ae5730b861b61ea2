import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeUnavailable } from '../../src/http/errors';
import { warehouseOver } from '../../src/warehouse/clickhouse';
import { createApiKey, createBrand } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

/**
 * A ClickHouse server (CLICKHOUSE_URL) that is up but hung: here a listener that
 * accepts connections and never answers. Reads give up after CLICKHOUSE_QUERY_TIMEOUT_MS (1.5 s) and
 * the routes answer 503 unavailable within 5 s, where the client alone would wait 30 s. This
 * machine has no ClickHouse server, so the service starts embedded and its reads are then sent to
 * the hung one.
 */
let hung: Server;
const held = new Set<Socket>();
let hungUrl: string;
// A server that sends the head of a 200 answer and then nothing.
let stalled: HttpServer;
let stalledUrl: string;
let t: TestService;
let apiKey: string;

beforeAll(async () => {
  hung = createServer((socket) => void held.add(socket));
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  hungUrl = `http://127.0.0.1:${(hung.address() as { port: number }).port}`;
  stalled = createHttpServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.flushHeaders();
  });
  await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
  stalledUrl = `http://127.0.0.1:${(stalled.address() as { port: number }).port}`;
  // No answer cache: every read goes to ClickHouse.
  t = await startTestService({ env: { READ_CACHE_MB: '0' } });
  const brand = await createBrand(t, { name: 'Acme' });
  apiKey = (await createApiKey(t, brand.id)).key;
});

afterAll(async () => {
  await destroyTestService(t);
  for (const socket of held) socket.destroy();
  await new Promise((resolve) => hung.close(resolve));
  stalled.closeAllConnections();
  await new Promise((resolve) => stalled.close(resolve));
});

const hungWarehouse = (url: string, queryTimeoutMs: number) =>
  warehouseOver(createClient({ url, log: { level: ClickHouseLogLevel.OFF } }), { database: t.services.warehouse.database, embedded: false, queryTimeoutMs });

async function failure(read: Promise<unknown>) {
  const started = performance.now();
  const err = await read.then(
    () => new Error('answered'),
    (e: unknown) => e,
  );
  return { err: err as Error & { code?: string }, ms: performance.now() - started };
}

describe('ClickHouse server hung', () => {
  it('a read, and an export until its answer starts, give up after the bound as a store unavailable', async () => {
    const wh = hungWarehouse(hungUrl, 300);
    for (const read of [() => wh.rows('SELECT 1'), () => wh.stream('SELECT 1')]) {
      const { err, ms } = await failure(read());
      expect(err.code).toBe('ETIMEDOUT');
      expect(err.message).toBe('ClickHouse did not answer within 300 ms');
      expect(storeUnavailable(err)).toBe(true);
      expect(ms).toBeGreaterThanOrEqual(290);
      expect(ms).toBeLessThan(2000);
    }
    await wh.close();
  });

  it('a read whose answer starts and then stalls gives up after the bound too', async () => {
    const wh = hungWarehouse(stalledUrl, 300);
    const { err, ms } = await failure(wh.rows('SELECT 1'));
    expect(err.code).toBe('ETIMEDOUT');
    expect(storeUnavailable(err)).toBe(true);
    expect(ms).toBeLessThan(2000);
    await wh.close();
  });

  it('Data API reads and CSV exports answer 503 unavailable within 5 s', async () => {
    const authorization = `Bearer ${apiKey}`;
    const before = await t.request({ method: 'GET', url: '/api/v1/metrics/summary?period=all', headers: { authorization } });
    expect(before.statusCode).toBe(200);

    const embedded = { ...t.services.warehouse };
    Object.assign(t.services.warehouse, hungWarehouse(hungUrl, t.config.timeouts.clickhouseQueryMs));
    try {
      expect(t.config.timeouts.clickhouseQueryMs).toBe(1500);
      const answers = await Promise.all(
        ['/api/v1/metrics/summary?period=all', '/api/v1/posts', '/api/v1/creators', '/api/v1/posts.csv'].map(async (url) => {
          const started = performance.now();
          const res = await t.request({ method: 'GET', url, headers: { authorization } });
          return { url, status: res.statusCode, body: res.json(), ms: performance.now() - started };
        }),
      );
      for (const answer of answers) {
        expect(answer, answer.url).toMatchObject({ status: 503, body: { error: 'unavailable' } });
        expect(answer.ms, answer.url).toBeLessThan(5000);
      }
    } finally {
      await t.services.warehouse.close();
      Object.assign(t.services.warehouse, embedded);
    }
    expect((await t.request({ method: 'GET', url: '/api/v1/metrics/summary?period=all', headers: { authorization } })).statusCode).toBe(200);
  });
});
