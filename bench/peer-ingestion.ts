import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import pg from 'pg';

/**
 * The peer-shaped ingestion path the ingestion-peer bench holds the service against (docs/benchmarks.md):
 * one BullMQ add per click; a Postgres unique insert plus one add per install or event; no logging,
 * no limits, no ClickHouse. PEER_DATABASE_URL, PEER_REDIS_URL, PEER_PREFIX name its stores.
 */
const db = new pg.Pool({ connectionString: process.env.PEER_DATABASE_URL });
const connection = new Redis(process.env.PEER_REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
const prefix = process.env.PEER_PREFIX ?? 'peer';
const queue = (name: string) => new Queue(name, { connection, prefix, defaultJobOptions: { removeOnComplete: true, removeOnFail: false } });
const queues = { clicks: queue('clicks'), installs: queue('installs'), events: queue('events') };

await db.query(`
  CREATE TABLE IF NOT EXISTS peer_installs (install_id text PRIMARY KEY, pixel_key text NOT NULL, platform text, click_token text, created_at timestamptz NOT NULL DEFAULT now());
  CREATE TABLE IF NOT EXISTS peer_events (transaction_id text PRIMARY KEY, pixel_key text NOT NULL, event_type text NOT NULL, click_token text, amount numeric, currency text, created_at timestamptz NOT NULL DEFAULT now());
`);

type Body = Record<string, unknown>;
const app = Fastify({ logger: false });

app.post('/api/public/attribution/clicks', async (req) => {
  const b = req.body as Body;
  const token = randomUUID();
  await queues.clicks.add('click', { token, domain: b.domain, slug: b.slug, query: b.query, user_agent: b.user_agent, country: b.country, at: Date.now() });
  return { redirect_url: 'https://shop.example/spring', click_token: token };
});

app.post('/api/public/attribution/installs', async (req, reply) => {
  const b = req.body as Body;
  const id = randomUUID();
  const r = await db.query('INSERT INTO peer_installs (install_id, pixel_key, platform, click_token) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [
    b.install_id,
    b.pixel_key,
    b.platform,
    b.clipboard_token,
  ]);
  if (r.rowCount === 1) await queues.installs.add('install', { id, ...b, at: Date.now() });
  return reply.code(202).send({ id, attributed: true });
});

app.post('/api/public/attribution/events', async (req, reply) => {
  const b = req.body as Body;
  const id = randomUUID();
  const r = await db.query(
    'INSERT INTO peer_events (transaction_id, pixel_key, event_type, click_token, amount, currency) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING',
    [b.transaction_id, b.pixel_key, b.event_type, b.click_token, b.amount, b.currency],
  );
  if (r.rowCount === 1) await queues.events.add('event', { id, ...b, at: Date.now() });
  return reply.code(202).send({ id, attributed: true });
});

// How bench/service-process.ts knows it is up.
app.get('/healthz', async () => ({ ok: true }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
process.on('SIGTERM', () => void app.close().then(() => Promise.all([db.end(), ...Object.values(queues).map((q) => q.close())])).then(() => process.exit(0)));
