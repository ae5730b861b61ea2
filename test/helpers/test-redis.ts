/**
 * The Redis server the tests share (with each other, and maybe with other users of the machine):
 * TEST_REDIS_URL, its `/N` database index honoured, by default 127.0.0.1:6379. A test touches only
 * keys under its own prefix there (isolatedEnv's QUEUE_PREFIX) and never empties a database; a
 * test that must lose or break Redis starts a private redis-server (private-redis.ts).
 */
export const testRedisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
