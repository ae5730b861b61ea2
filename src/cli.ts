import { parseArgs } from 'node:util';
import { loadConfig } from './config';
import { createDb } from './db/database';
import { seedDemoCommand } from './demo/cli';
import { signAdminToken } from './http/admin-auth';
import { importFile } from './internal/import';
import { createLogger } from './logger';
import type { Queues } from './facts';
import { FactQueues } from './queues/queues';
import { createRedis } from './queues/redis';
import { closeServices, createServices, migrate } from './services';

type Command = { summary: string; run(args: string[]): Promise<void> };

/** The operator CLI: `npm run cli -- <command>`. */
const commands: Record<string, Command> = {
  migrate: {
    summary: 'apply Postgres and ClickHouse migrations',
    async run() {
      const config = loadConfig();
      const services = await createServices(config, createLogger('info'));
      try {
        await migrate(services);
        console.log('migrations are up to date');
      } finally {
        await closeServices(services);
      }
    },
  },
  'seed-demo': {
    summary: 'load demo brands (--brands N --creators N --placements N --days N) and print their API keys',
    run: seedDemoCommand,
  },
  import: {
    summary: 'queue placements or snapshots from a file: import placements|snapshots FILE.ndjson|FILE.csv [--dry-run]',
    async run(args) {
      const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { 'dry-run': { type: 'boolean' } } });
      const [kind, file] = positionals;
      if ((kind !== 'placements' && kind !== 'snapshots') || !file) {
        throw new Error('usage: npm run cli -- import placements|snapshots FILE [--dry-run]');
      }
      // Postgres and Redis only: the running service's workers write the queued rows to
      // ClickHouse, so this works beside `npm start` and its embedded ClickHouse.
      const config = loadConfig();
      const db = createDb(config.databaseUrl, 2);
      const redis = createRedis(config.redisUrl);
      const queues: Queues = new FactQueues(redis, config.queuePrefix);
      try {
        const report = await importFile({ db, queues }, kind, file, { dryRun: values['dry-run'] });
        console.log(JSON.stringify(report, null, 2));
        if (report.refused.length > 0) process.exitCode = 1;
      } finally {
        await queues.close();
        await redis.quit();
        await db.destroy();
      }
    },
  },
  'admin-token': {
    summary: 'print an admin JWT valid for one hour (--sub NAME)',
    async run(args) {
      const { values } = parseArgs({ args, options: { sub: { type: 'string', default: 'operator' } } });
      console.log(signAdminToken(loadConfig().adminJwtSecret, values.sub));
    },
  },
};

function help(): void {
  console.log('usage: npm run cli -- <command> [options]\n\ncommands:');
  for (const [name, c] of Object.entries(commands)) console.log(`  ${name.padEnd(14)} ${c.summary}`);
}

const [name, ...rest] = process.argv.slice(2);
if (!name || name === '--help' || name === 'help') {
  help();
} else if (!commands[name]) {
  console.error(`unknown command: ${name}`);
  help();
  process.exit(2);
} else {
  commands[name].run(rest).then(
    () => process.exit(process.exitCode ?? 0),
    (err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
