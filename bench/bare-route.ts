import Fastify from 'fastify';

/**
 * The ceiling of the ingestion CPU bench: a bare Fastify route per load that parses the same
 * request JSON and answers what the service answered (BARE_ANSWERS: path -> JSON), no logging.
 */
const answers = JSON.parse(process.env.BARE_ANSWERS ?? '{}') as Record<string, unknown>;
const app = Fastify({ logger: false });
for (const [path, answer] of Object.entries(answers)) app.post(path, async () => answer);
// How bench/service-process.ts knows it is up.
app.get('/healthz', async () => ({ ok: true }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
