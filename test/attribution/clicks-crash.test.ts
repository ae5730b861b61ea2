import { afterAll, describe, expect, it } from 'vitest';
import { createWarehouse } from '../../src/warehouse/clickhouse';
import { eventually } from '../helpers/harness';
import { exited, SERVICE_COMMAND, serviceProcessEnv, startServiceProcess } from '../helpers/service-process';

/**
 * The portal's click counts stay exact when the process is killed at any
 * instant of a click load. The real service (`npm start`) takes clicks from several clients,
 * is SIGKILLed at a random moment, and starts again; once its queue drained, the clicks
 * counted must be every click answered 200, plus at most the clicks that were in flight at
 * the kill (accepted into Redis, their answer lost), never fewer.
 */
const { env, admin, remove } = serviceProcessEnv('crash', { RATE_LIMIT_PUBLIC_IP: '0' });
const ROUNDS = 3;
const CLIENTS = 8;
const MIN_PER_ROUND = 50;

afterAll(remove);

async function post(base: string, path: string, body: unknown): Promise<{ id: string }> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: admin, body: JSON.stringify(body) });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: string };
}

/** Clicks from CLIENTS clients until `stop`; answers how many were answered 200 and how many were in flight at the end. */
function clickLoad(base: string, domain: string) {
  let answered = 0;
  let inFlight = 0;
  let stopped = false;
  const client = async () => {
    while (!stopped) {
      inFlight++;
      try {
        const res = await fetch(`${base}/api/public/attribution/clicks`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ domain, slug: 'crash', user_agent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X)' }),
        });
        if (res.status === 200) answered++;
        await res.arrayBuffer();
      } catch {
        stopped = true; // the process is gone
      } finally {
        inFlight--;
      }
    }
  };
  const clients = Array.from({ length: CLIENTS }, client);
  return {
    answered: () => answered,
    inFlight: () => inFlight,
    done: async () => {
      await Promise.all(clients);
      return answered;
    },
  };
}

const linkClicks = async (base: string, brandId: string) => {
  const res = await fetch(`${base}/api/internal/attribution-links?brand_id=${brandId}`, { headers: admin });
  const [link] = ((await res.json()) as { data: { clicks: number }[] }).data;
  return link!.clicks;
};

/** The clicks of the brand's portal overview, as its owner sees them. */
const portalClicks = async (base: string, brandId: string) => {
  const owner = { email: `owner-${brandId}@crash.example`, password: 'crash-owner-password' };
  await post(base, `/api/internal/brands/${brandId}/portal-users`, owner);
  const login = await fetch(`${base}/api/client/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(owner) });
  expect(login.status).toBe(200);
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const res = await fetch(`${base}/api/client/attribution/overview?period=7d`, { headers: { cookie } });
  return ((await res.json()) as { clicks: number }).clicks;
};

describe('clicks under SIGKILL mid-load', () => {
  it(`counts every answered click exactly once over ${ROUNDS} kills at random instants`, async () => {
    let { child, base } = await startServiceProcess(SERVICE_COMMAND, env);
    const brand = await post(base, '/api/internal/brands', { name: 'Crash Co' });
    const creator = await post(base, '/api/internal/creators', { name: 'Maya Lopez' });
    const domain = `crash-${Date.now()}.link`;
    const domainRow = await post(base, '/api/internal/attribution-domains', { hostname: domain, brand_id: brand.id });
    await post(base, '/api/internal/attribution-links', {
      brand_id: brand.id,
      creator_id: creator.id,
      domain_id: domainRow.id,
      slug: 'crash',
      type: 'web',
      destination_url: 'https://crash.example/',
    });

    let answered = 0;
    let inFlightAtKills = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const load = clickLoad(base, domain);
      // However slow the machine, each kill comes mid-load: after some clicks were answered, at a random instant.
      await eventually(async () => load.answered(), (n) => n >= MIN_PER_ROUND, 60_000);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 1000));
      inFlightAtKills += load.inFlight();
      const gone = exited(child);
      child.kill('SIGKILL');
      await gone;
      answered += await load.done();
      ({ child, base } = await startServiceProcess(SERVICE_COMMAND, env));
    }
    expect(answered).toBeGreaterThanOrEqual(ROUNDS * MIN_PER_ROUND);

    // Once the restarted process drained what Redis held, nothing answered is missing.
    const counted = await eventually(() => linkClicks(base, brand.id), (n) => n >= answered, 30_000);
    // Let any late batch land, then read again: no click counts twice.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const settled = await linkClicks(base, brand.id);
    expect(settled).toBe(counted);
    expect(settled).toBeLessThanOrEqual(answered + inFlightAtKills);
    expect(await portalClicks(base, brand.id)).toBe(settled);

    // The projection's count is the rows' own, and every row is one distinct click.
    const stopped = exited(child);
    child.kill('SIGTERM');
    expect(await stopped).toBe(0);
    const wh = await createWarehouse({ database: env.CLICKHOUSE_DATABASE, dataDir: env.DATA_DIR });
    try {
      const [raw] = await wh.rows<{ rows: number; tokens: number }>(
        'SELECT count() AS rows, uniqExact(click_token) AS tokens FROM clicks WHERE brand_id = {b:String} SETTINGS optimize_use_projections = 0',
        { b: brand.id },
      );
      expect(raw).toEqual({ rows: settled, tokens: settled });
    } finally {
      await wh.close();
    }
  }, 240_000);
});
