import { parseArgs } from 'node:util';
import { startWorkers } from '../../workers';
import { buildApp } from '../app';
import { loadConfig } from '../config';
import { createLogger } from '../logger';
import { closeServices, createServices, migrate } from '../services';
import { describeDemo, loadDemo } from '.';

const LIMITS = { brands: 100, creators: 100_000, placements: 1_000_000, days: 3650 };

/**
 * `npm run cli -- seed-demo [--brands N --creators N --placements N --days N]`: loads a
 * demo data set through the internal endpoints and this process's own workers (so with
 * embedded ClickHouse, stop `npm start` first), then prints each brand's API key.
 */
export async function seedDemoCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      brands: { type: 'string', default: '1' },
      creators: { type: 'string', default: '40' },
      placements: { type: 'string', default: '400' },
      days: { type: 'string', default: '180' },
    },
  });
  const size = Object.fromEntries(
    (Object.keys(LIMITS) as (keyof typeof LIMITS)[]).map((name) => {
      const n = Number(values[name]);
      if (!Number.isInteger(n) || n < 1 || n > LIMITS[name]) throw new Error(`--${name} must be an integer from 1 to ${LIMITS[name]}`);
      return [name, n];
    }),
  ) as Record<keyof typeof LIMITS, number>;

  const config = loadConfig();
  const log = createLogger('warn');
  const services = await createServices(config, log);
  await migrate(services);
  const app = await buildApp(services);
  const workers = startWorkers({ redisUrl: config.redisUrl, prefix: config.queuePrefix, warehouse: services.warehouse, db: services.db, log });
  try {
    const brands = await loadDemo(services, app, size);
    console.log(describeDemo(brands, config.publicBaseUrl, config.port));
  } finally {
    await app.close();
    await workers.close();
    await closeServices(services);
  }
}
