import type { FastifyInstance } from 'fastify';
import { signAdminToken } from '../http/admin-auth';
import type { Services } from '../services';
import { type DemoBrand, type DemoSize, seedDemo } from './seed';

export type { DemoSize };

/** What `npm start` loads into an empty database outside production. */
export const FIRST_START_DEMO: DemoSize = { brands: 1, creators: 12, placements: 60, days: 90 };

/** Seeds the demo data set through `app` and waits until the workers have written it. */
export async function loadDemo(services: Services, app: FastifyInstance, size: DemoSize): Promise<DemoBrand[]> {
  const brands = await seedDemo(app, signAdminToken(services.config.adminJwtSecret, 'demo'), size);
  await services.queues.drain();
  for (const deadline = Date.now() + 5 * 60_000; ; ) {
    const counts = Object.values(await services.queues.counts());
    if (counts.every((c) => (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0) === 0)) break;
    if (Date.now() > deadline) throw new Error('the demo data did not reach ClickHouse in 5 minutes; are the workers running?');
    await new Promise((r) => setTimeout(r, 100));
  }
  return brands;
}

/** How to use a demo brand: its API key, the portal page with its login, a ready curl line and the API reference. */
export function describeDemo(brands: DemoBrand[], publicBaseUrl: string): string {
  return brands
    .map((b) =>
      [
        `Demo brand "${b.name}" (${b.id})`,
        `  API key:      ${b.apiKey}`,
        `  Portal:       ${publicBaseUrl}/portal/  (log in as ${b.portal.email} / ${b.portal.password})`,
        `  Try:          curl -H "Authorization: Bearer ${b.apiKey}" ${publicBaseUrl}/api/v1/metrics/summary`,
        `  API docs:     ${publicBaseUrl}/docs/api`,
      ].join('\n'),
    )
    .join('\n\n');
}

/**
 * `npm start` outside production with DEMO=1: a newcomer's empty database gets a small
 * demo brand, so the API has data at once. Never fails the start: a problem is logged.
 */
export async function loadDemoOnFirstStart(services: Services, app: FastifyInstance): Promise<void> {
  const { config, db, log } = services;
  if (config.env === 'production' || !config.demo) return;
  try {
    const existing = await db.selectFrom('brands').select('id').limit(1).executeTakeFirst();
    if (existing) return;
    log.info('empty database: loading a demo brand (DEMO=0 turns this off)');
    const brands = await loadDemo(services, app, FIRST_START_DEMO);
    console.log(`\n${describeDemo(brands, config.publicBaseUrl)}\n`);
  } catch (err) {
    // Stopped (Ctrl-C, SIGTERM) before the demo was complete: not a failure of the demo.
    if ((err as { code?: string }).code === 'FST_ERR_REOPENED_CLOSE_SERVER') {
      log.warn('stopped while loading the demo brand; `npm run cli -- seed-demo` loads one any time');
    } else log.error({ err }, 'could not load the demo brand');
  }
}
