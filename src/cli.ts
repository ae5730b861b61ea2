import { parseArgs } from 'node:util';
import { loadConfig } from './config';
import { seedDemoCommand } from './demo/cli';
import { signAdminToken } from './http/admin-auth';
import { createLogger } from './logger';
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
    () => process.exit(0),
    (err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
