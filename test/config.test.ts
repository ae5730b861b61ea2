import { mkdtempSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config';

const dataDir = mkdtempSync(join(tmpdir(), 'svc-config-'));

describe('configuration', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({ DATA_DIR: dataDir });
    expect(c.port).toBe(3000);
    expect(c.host).toBe('127.0.0.1');
    expect(c.databaseUrl).toBe(`postgres://${userInfo().username}@localhost:5432/svc`);
    expect(c.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(c.clickhouseUrl).toBeUndefined();
    expect(c.clickhouseDatabase).toBe('svc');
    expect(c.publicBaseUrl).toBe('http://127.0.0.1:3000');
  });

  it('connects as the OS user when DATABASE_URL names none, as libpq does', () => {
    expect(loadConfig({ DATA_DIR: dataDir, DATABASE_URL: 'postgres://db.internal:5432/x' }).databaseUrl).toBe(
      `postgres://${userInfo().username}@db.internal:5432/x`,
    );
    expect(loadConfig({ DATA_DIR: dataDir, DATABASE_URL: 'postgres://app:pw@db:5432/x' }).databaseUrl).toBe('postgres://app:pw@db:5432/x');
  });

  it('names the bad variable in one line', () => {
    expect(() => loadConfig({ DATA_DIR: dataDir, PORT: 'eighty' })).toThrowError(/^Invalid configuration: PORT /);
    expect(() => loadConfig({ DATA_DIR: dataDir, REDIS_URL: 'http://x' })).toThrowError(/REDIS_URL/);
    expect(() => loadConfig({ DATA_DIR: dataDir, CLICKHOUSE_DATABASE: 'a;drop' })).toThrowError(/CLICKHOUSE_DATABASE/);
  });

  it('stops on a value it would otherwise misread, saying what is wrong with it', () => {
    const refused = (name: string, value: string) => {
      try {
        loadConfig({ DATA_DIR: dataDir, [name]: value });
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    // A blank number read as 0 would turn a limit off or listen on a random port.
    expect(refused('RATE_LIMIT_DATA_API', ' ')).toBe('Invalid configuration: RATE_LIMIT_DATA_API must be a whole number (got " ")');
    expect(refused('PORT', ' ')).toMatch(/^Invalid configuration: PORT must be a whole number/);
    expect(refused('RATE_LIMIT_PUBLIC_IP', 'Infinity')).toMatch(/RATE_LIMIT_PUBLIC_IP must be a whole number/);
    expect(refused('PG_STATEMENT_TIMEOUT_MS', '1e3')).toMatch(/PG_STATEMENT_TIMEOUT_MS must be a whole number/);
    expect(refused('PORT', 'abc')).not.toMatch(/required/);
    expect(refused('HOST', ' ')).toMatch(/HOST must be a host name or an IP address/);
    expect(refused('TRUST_PROXY', 'garbage')).toMatch(/TRUST_PROXY must be true, false or a comma-separated list/);
    expect(refused('TRUST_PROXY', '10.0.0.0/33')).toMatch(/TRUST_PROXY/);
    expect(refused('REDIS_URL', 'redis://127.0.0.1:6379/abc')).toMatch(/REDIS_URL must name a database by its number/);
    for (const [name, value] of [
      ['TRUST_PROXY', 'loopback, 10.0.0.0/8'],
      ['TRUST_PROXY', '10.0.0.0/255.0.0.0,::1/128'],
      ['HOST', '::'],
      ['HOST', 'svc.internal'],
      ['REDIS_URL', 'redis://:pw@127.0.0.1:6379/2'],
    ]) {
      expect(refused(name!, value!), `${name}=${value}`).toBe('accepted');
    }
  });

  it('requires both secrets in production and generates stable ones elsewhere', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR: dataDir })).toThrowError(ConfigError);
    expect(() =>
      loadConfig({ NODE_ENV: 'production', DATA_DIR: dataDir, ADMIN_JWT_SECRET: 'x'.repeat(32) }),
    ).toThrowError(/SECRET_KEY is required/);
    const a = loadConfig({ DATA_DIR: dataDir });
    const b = loadConfig({ DATA_DIR: dataDir });
    expect(a.adminJwtSecret).toHaveLength(43);
    expect(b.adminJwtSecret).toBe(a.adminJwtSecret);
    expect(b.secretKey).toBe(a.secretKey);
  });

  it('reads TRUST_PROXY as false, true or a list of proxies', () => {
    expect(loadConfig({ DATA_DIR: dataDir }).trustProxy).toBe(false);
    expect(loadConfig({ DATA_DIR: dataDir, TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ DATA_DIR: dataDir, TRUST_PROXY: '10.0.0.0/8,127.0.0.1' }).trustProxy).toBe('10.0.0.0/8,127.0.0.1');
  });

  it('reads the wrong-key and portal limits, METRICS_TOKEN, and TEST_SCRYPT_N only under NODE_ENV=test', () => {
    const c = loadConfig({ DATA_DIR: dataDir });
    expect(c.rateLimits).toMatchObject({ failedKeys: 60, portal: 600 });
    expect(c.metricsToken).toBeUndefined();
    expect(c.testScryptN).toBeUndefined();
    expect(loadConfig({ DATA_DIR: dataDir, RATE_LIMIT_FAILED_KEYS: '0', RATE_LIMIT_PORTAL: '30' }).rateLimits).toMatchObject({ failedKeys: 0, portal: 30 });
    expect(loadConfig({ DATA_DIR: dataDir, METRICS_TOKEN: 'a-scraper-token-of-length' }).metricsToken).toBe('a-scraper-token-of-length');
    expect(() => loadConfig({ DATA_DIR: dataDir, METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN must be at least 16 characters/);
    expect(loadConfig({ DATA_DIR: dataDir, NODE_ENV: 'test', TEST_SCRYPT_N: '1024' }).testScryptN).toBe(1024);
    expect(() => loadConfig({ DATA_DIR: dataDir, NODE_ENV: 'test', TEST_SCRYPT_N: '1000' })).toThrow(/TEST_SCRYPT_N must be a power of 2/);
    expect(() => loadConfig({ DATA_DIR: dataDir, TEST_SCRYPT_N: '1024' })).toThrow(/TEST_SCRYPT_N is honoured only when NODE_ENV=test/);
  });

  it('builds PUBLIC_BASE_URL from HOST and PORT unless given', () => {
    expect(loadConfig({ DATA_DIR: dataDir, HOST: '0.0.0.0', PORT: '8080' }).publicBaseUrl).toBe('http://0.0.0.0:8080');
    expect(loadConfig({ DATA_DIR: dataDir, PUBLIC_BASE_URL: 'https://svc.example.com/' }).publicBaseUrl).toBe(
      'https://svc.example.com',
    );
  });
});
