/**
 * The Postgres server the tests make their databases on: TEST_POSTGRES_URL (a URL without a
 * database), by default the role `root` on 127.0.0.1:5432 with trust authentication, as CI sets up.
 */
const server = new URL(process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432');

export const testPostgres = { host: server.hostname, port: Number(server.port || 5432) };

/** The URL of database `name` on the tests' server, or on `port` of the same host (a proxy in front of it). */
export function testDatabaseUrl(name: string, port = testPostgres.port): string {
  const url = new URL(server);
  url.port = String(port);
  url.pathname = `/${name}`;
  return url.toString();
}
