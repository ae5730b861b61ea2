import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPortalUser, portalLogin } from '../../portal/helpers';
import { promtoolCheckMetrics, promtoolPresent, promtoolRequired } from '../../helpers/promtool';
import { createBrand } from '../../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { type PortalCalls, portalCalls, startDns, startReceiver, TEST_ENV, until } from './helpers';

/** What operators see of outbound webhooks: the metrics (promtool-valid), /healthz's stalled queue, the queue board. */

let t: TestService;
let dns: Awaited<ReturnType<typeof startDns>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let portal: PortalCalls;
let endpoint: { id: string };

beforeAll(async () => {
  dns = await startDns();
  receiver = await startReceiver();
  t = await startTestService({ env: { ...TEST_ENV(dns.server), QUEUE_STALLED_SECONDS: '1' } });
  const brand = (await createBrand(t, { name: 'Acme' })).id;
  await createPortalUser(t, brand, 'a@acme.test');
  portal = portalCalls(t, await portalLogin(t, 'a@acme.test'));
  endpoint = (await portal.send('POST', '/webhooks', { url: receiver.url('/ops') })).json();
});
afterAll(async () => {
  await destroyTestService(t);
  await receiver.close();
  await dns.close();
});

const scrape = async () => (await t.request({ method: 'GET', url: '/metrics' })).body;

describe('operators', () => {
  it('counts attempts by outcome, their durations and endpoints by status, never by brand or URL; promtool accepts them', async () => {
    const sent = (await portal.send('POST', `/webhooks/${endpoint.id}/test`)).json();
    await until(async () => (await portal.get(`/webhooks/${endpoint.id}/deliveries/${sent.id}`)).json().status, (s) => s === 'succeeded');
    const text = await until(scrape, (m) => /svc_webhook_endpoints\{status="active"\} 1\b/.test(m), 20_000);
    expect(text).toMatch(/svc_webhook_attempts_total\{outcome="success"\} 1\b/);
    expect(text).toMatch(/svc_webhook_attempt_duration_seconds_count 1\b/);
    expect(text).toContain('# TYPE svc_webhook_delivery_lag_seconds histogram');
    expect(text).not.toContain(receiver.url('/ops'));
    const webhookLines = text.split('\n').filter((l) => l.startsWith('svc_webhook'));
    expect(webhookLines.every((l) => !/brand|url|endpoint_id/.test(l))).toBe(true);
    if (promtoolPresent || promtoolRequired) {
      const { status, output } = promtoolCheckMetrics(text);
      expect(output.split('\n').filter((l) => l.includes('svc_webhook'))).toEqual([]);
      expect(status, output).toBe(0);
    }
  });

  it('counts the jobs of the webhooks queue, and /healthz names it when its jobs wait unconsumed', async () => {
    await t.stopWorkers();
    await portal.send('POST', `/webhooks/${endpoint.id}/test`);
    const health = await until(async () => (await t.request({ method: 'GET', url: '/healthz' })).json(), (h) => (h.degraded ?? []).includes('queue_stalled:webhooks'), 10_000);
    expect(health.ok).toBe(true);
    const text = await scrape();
    expect(text).toMatch(/svc_queue_jobs\{queue="webhooks",state="waiting"\} 1\b/);
    t.startWorkers();
    await until(async () => (await t.request({ method: 'GET', url: '/healthz' })).json(), (h) => !(h.degraded ?? []).includes('queue_stalled:webhooks'), 20_000);
  });
});
