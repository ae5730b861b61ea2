import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attributionBrand, type AttributionBrand, IPHONE } from '../attribution/public/setup';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { promtoolCheckMetrics, promtoolPresent, promtoolRequired } from '../helpers/promtool';

let t: TestService;
let acme: AttributionBrand;
beforeAll(async () => {
  t = await startTestService();
  acme = await attributionBrand(t, 'Metrics');
});
afterAll(async () => destroyTestService(t));

const scrape = async () => {
  const res = await t.request({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  return res.body;
};

/** The request count of one label set, 0 when absent. */
const requests = (text: string, labels: string) =>
  Number(new RegExp(`^svc_http_request_duration_seconds_count\\{${labels.replace(/[/]/g, '\\/')}\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);

describe('GET /metrics for Prometheus tools', () => {
  it('names no gauge or other non-counter with the counters\' _total suffix', async () => {
    const text = await scrape();
    const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => ({ name, type }));
    expect(types.length).toBeGreaterThan(20);
    expect(types.filter((m) => m.type !== 'counter' && m.name!.endsWith('_total'))).toEqual([]);
    // prom-client's per-type gauges stay: their sum is the total the removed metrics carried.
    expect(types).toContainEqual({ name: 'nodejs_active_handles', type: 'gauge' });
  });

  it.skipIf(!promtoolPresent && !promtoolRequired)('passes `promtool check metrics`, after requests of every kind', async () => {
    await t.request({ method: 'GET', url: '/healthz' });
    await t.request({ method: 'GET', url: '/no-such-route' });
    await t.request({ method: 'GET', url: '/maya', headers: { host: acme.hostname, 'user-agent': IPHONE } });
    const { status, output } = promtoolCheckMetrics(await scrape());
    expect(output).toBe('');
    expect(status).toBe(0);
  });

  it('counts link-host visits under route="link_host", apart from the 404s of unknown paths', async () => {
    const before = await scrape();
    const visits = [
      { url: '/maya', status: 302 },
      { url: '/app', status: 200 }, // the smart install page
      { url: '/healthz', status: 302 }, // a slug that is also an API path is still a visit (the root link)
      { url: '/', status: 302 },
    ];
    for (const v of visits) {
      const res = await t.request({ method: 'GET', url: v.url, headers: { host: acme.hostname, 'user-agent': IPHONE } });
      expect(res.statusCode, v.url).toBe(v.status);
    }
    expect((await t.request({ method: 'GET', url: '/no-such-route' })).statusCode).toBe(404);
    const after = await scrape();
    const delta = (labels: string) => requests(after, labels) - requests(before, labels);
    expect(delta('method="GET",route="link_host",status="302"')).toBe(3);
    expect(delta('method="GET",route="link_host",status="200"')).toBe(1);
    expect(delta('method="GET",route="unmatched",status="404"')).toBe(1);
    expect(delta('method="GET",route="/healthz",status="302"')).toBe(0);
  });
});
