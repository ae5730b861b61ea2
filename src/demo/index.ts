import type { FastifyInstance } from 'fastify';
import { signAdminToken } from '../http/admin-auth';
import type { Services } from '../services';
import { type DemoBrand, type DemoSize, seedDemo } from './seed';

export type { DemoBrand, DemoSize };

/** What `npm start` loads into an empty database outside production. */
export const FIRST_START_DEMO: DemoSize = { brands: 1, creators: 12, placements: 60, days: 90 };

/** Seeds the demo data set through `app` and waits until the workers have written it. */
export async function loadDemo(services: Services, app: FastifyInstance, size: DemoSize): Promise<DemoBrand[]> {
  const { config } = services;
  const brands = await seedDemo(app, signAdminToken(config.adminJwtSecret, 'demo'), size, { publicBaseUrl: config.publicBaseUrl });
  await services.queues.drain();
  for (const deadline = Date.now() + 5 * 60_000; ; ) {
    const counts = Object.values(await services.queues.counts());
    if (counts.every((c) => (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0) === 0)) break;
    if (Date.now() > deadline) throw new Error('the demo data did not reach ClickHouse in 5 minutes; are the workers running?');
    await new Promise((r) => setTimeout(r, 100));
  }
  return brands;
}

/**
 * How to use a demo brand: its portal login, API key with a ready curl line, pixel key, the API
 * reference, and its creator links on `<host>.localhost:<port>`, which a browser on this machine opens
 * (every name under localhost is the machine itself); `port` is the one the service listens on.
 */
export function describeDemo(brands: DemoBrand[], publicBaseUrl: string, port: number): string {
  return brands
    .map((b) => {
      const link = (slug: string) => `http://${b.links.hostname}:${port}/${slug}`;
      return [
        `Demo brand "${b.name}" (${b.id})`,
        `  Portal:       ${publicBaseUrl}/portal/  (log in as ${b.portal.email} / ${b.portal.password})`,
        `  API key:      ${b.apiKey}`,
        `  Try:          curl -H "Authorization: Bearer ${b.apiKey}" ${publicBaseUrl}/api/v1/metrics/summary`,
        `  Pixel key:    ${b.pixelKey}`,
        `  API docs:     ${publicBaseUrl}/docs/api`,
        `  Creator links (open them in a browser on this machine):`,
        `    web link:   ${link(b.links.web)}  (redirects to the shop, with a click token)`,
        `    app link:   ${link(b.links.app)}  (the smart install page)`,
      ].join('\n');
    })
    .join('\n\n');
}

/**
 * `npm start` outside production with DEMO=1: a newcomer's empty database gets a small demo brand,
 * so the API has data at once. Answers the brands loaded (none when the database had data, or in
 * production). Never fails the start: a problem is logged.
 */
export async function loadDemoOnFirstStart(services: Services, app: FastifyInstance): Promise<DemoBrand[]> {
  const { config, db, log } = services;
  if (config.env === 'production' || !config.demo) return [];
  try {
    const existing = await db.selectFrom('brands').select('id').limit(1).executeTakeFirst();
    if (existing) return [];
    log.info('empty database: loading a demo brand (DEMO=0 turns this off)');
    return await loadDemo(services, app, FIRST_START_DEMO);
  } catch (err) {
    // Stopped (Ctrl-C, SIGTERM) before the demo was complete: not a failure of the demo.
    if ((err as { code?: string }).code === 'FST_ERR_REOPENED_CLOSE_SERVER') {
      log.warn('stopped while loading the demo brand; `npm run cli -- seed-demo` loads one any time');
    } else log.error({ err }, 'could not load the demo brand');
    return [];
  }
}
