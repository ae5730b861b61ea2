import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services';

/**
 * GET /docs/sdk (public): the mobile SDK integration guide, docs/sdk.md, which the portal's
 * /setup links as `sdk_docs_url`. Served as Markdown with `{base_url}` replaced by
 * PUBLIC_BASE_URL, so that its curl examples run as pasted. Read once, at start.
 */
const SDK_GUIDE = readFileSync(new URL('../../docs/sdk.md', import.meta.url), 'utf8');

export async function docsRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const guide = SDK_GUIDE.replaceAll('{base_url}', services.config.publicBaseUrl);
  app.get('/docs/sdk', async (_req, reply) => reply.header('content-type', 'text/markdown; charset=utf-8').send(guide));
}
