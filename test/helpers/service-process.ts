import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { dropDatabase } from '../../src/db/database';
import { signAdminToken } from '../../src/http/admin-auth';
import { deleteKeysByPrefix } from '../../src/queues/redis';
import { isolatedEnv } from './harness';
import { START_NODE_FLAGS } from './start-flags';
import { testRedisUrl } from './test-redis';

/** `npm start`'s command, run in place: Node with its flags and tsx on src/main.ts. */
export const SERVICE_COMMAND = [process.execPath, ...START_NODE_FLAGS, '--import', 'tsx', 'src/main.ts', 'all'];

/** Starts `command` (the service, or something that starts it) and waits for its listen line; `watch` sees its output so far. */
export function startServiceProcess(
  command: string[],
  env: NodeJS.ProcessEnv,
  watch?: (out: string) => void,
): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(command[0]!, command.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no listen line in 60 s: ${out}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      watch?.(out);
      const m = /svc listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, base: m[1]! });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => {
      out += d.toString();
      watch?.(out);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

/** The exit code of `child` once it exits. */
export const exited = (child: ChildProcess) => new Promise<number | null>((r) => child.once('exit', (code) => r(code)));

/**
 * The environment of a service run as its own process (`npm start`), isolated like a test
 * service: its own databases, Redis prefix, secrets and data directory; `remove` drops them.
 */
export function serviceProcessEnv(name: string, extra: Record<string, string> = {}) {
  const env = {
    ...process.env,
    ...isolatedEnv(name),
    NODE_ENV: 'development',
    PORT: '0',
    DATA_DIR: mkdtempSync(join(tmpdir(), `svc-${name}-`)),
    DEMO: '0',
    LOG_LEVEL: 'warn',
    REDIS_URL: testRedisUrl,
    ...extra,
  };
  const admin = { authorization: `Bearer ${signAdminToken(env.ADMIN_JWT_SECRET)}`, 'content-type': 'application/json' };
  const remove = async () => {
    await dropDatabase(env.DATABASE_URL);
    const redis = new Redis(env.REDIS_URL);
    await deleteKeysByPrefix(redis, env.QUEUE_PREFIX);
    await redis.quit();
    rmSync(env.DATA_DIR, { recursive: true, force: true });
  };
  return { env, admin, remove };
}
