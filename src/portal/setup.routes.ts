import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { pixelSnippet, pixelUrl } from '../attribution/pixel/routes';
import type { Services } from '../services';
import { answer, type Operations, readErrors } from './schemas';

const setupAnswer = z.object({
  pixel_key: z.string().describe("The brand's public pixel key (pk_...); no other portal answer holds it"),
  snippet: z.string().describe('HTML to paste into every page of the brand site: loads the web pixel'),
  pixel_url: z.string(),
  sdk_docs_url: z.string(),
  install_endpoint: z.string(),
  events_endpoint: z.string(),
});

export const setupOperations: Operations = {
  'GET /setup': {
    summary: 'Pixel key, ready-to-paste pixel snippet, SDK docs and the public endpoints',
    responses: { 200: setupAnswer, 401: readErrors[401] },
  },
};

/** GET /setup (SPEC 4.4, CONTRACT 8): everything a brand needs to send conversions. */
export async function setupRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const base = services.config.publicBaseUrl;
  app.get('/setup', async (req) => {
    const brand = await services.db
      .selectFrom('brands')
      .select('pixel_key')
      .where('id', '=', req.portal!.brandId)
      .executeTakeFirstOrThrow();
    return answer(setupAnswer, {
      pixel_key: brand.pixel_key,
      snippet: pixelSnippet(base, brand.pixel_key),
      pixel_url: pixelUrl(base),
      sdk_docs_url: `${base}/docs/sdk`,
      install_endpoint: `${base}/api/public/attribution/installs`,
      events_endpoint: `${base}/api/public/attribution/events`,
    });
  });
}
