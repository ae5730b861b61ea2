import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb } from '../../../src/db/database';
import { eventually } from '../../helpers/harness';
import { exited, SERVICE_COMMAND, serviceProcessEnv, startServiceProcess } from '../../helpers/service-process';
import { startReceiver } from './helpers';

/**
 * The real service (`npm start`) delivering webhooks while it is SIGKILLed mid-load, twice, and
 * started again: every attributed install and sale recorded makes exactly one delivery to the
 * endpoint, and the receiver gets every event (some perhaps twice: at least once), none missing.
 */
const PUBLIC = 'http://svc.webhooks-kill.test';
const { env, admin, remove } = serviceProcessEnv('whkill', {
  RATE_LIMIT_PUBLIC_IP: '0',
  PUBLIC_BASE_URL: PUBLIC,
  WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
  WEBHOOK_REQUIRE_HTTPS: 'false',
});
const ROUNDS = 2;
const CLIENTS = 6;
const MIN_PER_ROUND = 40;

afterAll(remove);

async function post(base: string, path: string, body: unknown, headers: Record<string, string> = admin) {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Record<string, string>;
}

/** Purchases and installs, credited by a code, from CLIENTS clients until the process is gone. */
function load(base: string, pixelKey: string, code: string) {
  let answered = 0;
  let stopped = false;
  let n = 0;
  const client = async (c: number) => {
    while (!stopped) {
      const i = n++;
      const [path, body] =
        i % 3 === 0
          ? ['installs', { pixel_key: pixelKey, install_id: `dev-${c}-${i}-${Date.now()}`, platform: 'ios', code }]
          : ['events', { pixel_key: pixelKey, event_type: 'purchase', transaction_id: `tx-${c}-${i}-${Date.now()}`, code, amount: 9.99 }];
      try {
        const res = await fetch(`${base}/api/public/attribution/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        if (res.status < 300) answered++;
        await res.arrayBuffer();
      } catch {
        stopped = true;
      }
    }
  };
  const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
  return { answered: () => answered, done: () => Promise.all(clients) };
}

describe('webhooks under SIGKILL mid-load', () => {
  it('makes one delivery per fact and delivers every event, over kills at random instants', async () => {
    const receiver = await startReceiver();
    let { child, base } = await startServiceProcess(SERVICE_COMMAND, env);
    const db = createDb(env.DATABASE_URL, 2);
    try {
      const brand = await post(base, '/api/internal/brands', { name: 'Kill Co' });
      const creator = await post(base, '/api/internal/creators', { name: 'Maya Lopez' });
      await post(base, '/api/internal/attribution-codes', { brand_id: brand.id, creator_id: creator.id, label: 'KILL10' });
      const owner = { email: 'owner@kill.example', password: 'kill-owner-password' };
      await post(base, `/api/internal/brands/${brand.id}/portal-users`, owner);
      const login = await fetch(`${base}/api/client/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(owner) });
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const endpoint = await post(base, '/api/client/attribution/webhooks', { url: receiver.url('/kill') }, { cookie, origin: PUBLIC, 'content-type': 'application/json' });

      for (let round = 0; round < ROUNDS; round++) {
        const running = load(base, brand.pixel_key!, 'KILL10');
        await eventually(async () => running.answered(), (k) => k >= MIN_PER_ROUND, 60_000);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 1000));
        const gone = exited(child);
        child.kill('SIGKILL');
        await gone;
        await running.done();
        ({ child, base } = await startServiceProcess(SERVICE_COMMAND, env));
      }

      // Every fact recorded (answered or not) fans out once, and every delivery succeeds.
      const facts = async () => {
        const { rows } = await sql<{ id: string }>`
          SELECT id FROM installs WHERE brand_id = ${brand.id} AND attributed
          UNION ALL SELECT id FROM ledger_events WHERE brand_id = ${brand.id}`.execute(db);
        return rows.map((r) => `evt_${r.id.replace(/-/g, '')}`).sort();
      };
      const deliveries = async () =>
        (await sql<{ event_id: string; status: string }>`SELECT event_id, status FROM webhook_deliveries WHERE endpoint_id = ${endpoint.id} AND NOT test`.execute(db)).rows;
      const expected = await facts();
      expect(expected.length).toBeGreaterThanOrEqual(ROUNDS * MIN_PER_ROUND);
      const done = await eventually(deliveries, (rows) => rows.length >= expected.length && rows.every((r) => r.status === 'succeeded'), 120_000);
      expect(done.map((r) => r.event_id).sort()).toEqual(expected);
      const got = new Set(receiver.received.filter((r) => r.path === '/kill').map((r) => String(r.headers['webhook-id'])));
      expect([...got].sort()).toEqual(expected);

      const stopped = exited(child);
      child.kill('SIGTERM');
      expect(await stopped).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await db.destroy();
      await receiver.close();
    }
  }, 300_000);
});
