import cookie from '@fastify/cookie';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { Queue } from 'bullmq';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FactQueues } from '../queues/queues';
import { bearerToken } from '../secrets';
import { adminGate } from './admin-auth';
import { Refusal } from '../refusal';
import { originOf, ownOrigin } from './same-origin';

const BASE = '/admin/queues';
const COOKIE = 'svc_admin';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What a browser without a token is shown instead of JSON: how to get one. */
const SIGN_IN_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Queues: an admin token is needed</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5">
<h1>An admin token is needed</h1>
<p>The queue board is for operators. On the service's machine, print an admin token (valid one hour):</p>
<pre>npm run cli -- admin-token</pre>
<p>then open <code>${BASE}?token=&lt;the token&gt;</code> once: the board keeps it in a cookie for this path and
takes it out of the address.</p>
</body></html>
`;

/**
 * bull-board for operators, behind the admin JWT. A browser cannot send a Bearer header, so
 * `/admin/queues?token=<jwt>` stores the verified token in an HttpOnly cookie scoped to this path
 * and redirects to the same address without it (the token leaves the address bar and history);
 * every request is still verified. A write authenticated by the cookie must come from this
 * service's pages, and one from a foreign Origin is always refused (docs/hardening.md).
 */
export async function bullBoardRoutes(
  app: FastifyInstance,
  { queues, otherQueues = [], adminJwtSecret, publicBaseUrl }: { queues: FactQueues; otherQueues?: Queue[]; adminJwtSecret: string; publicBaseUrl: string },
) {
  const serverAdapter = new FastifyAdapter();
  createBullBoard({
    queues: [...Object.values(queues.queues), ...otherQueues].map((q) => new BullMQAdapter(q)),
    serverAdapter,
  });
  serverAdapter.setBasePath(BASE);
  const admin = adminGate(adminJwtSecret, { query: 'token', cookie: COOKIE });
  const isOwn = ownOrigin(publicBaseUrl);
  const secure = publicBaseUrl.startsWith('https:');
  // Cookies only where they are read: the board and the portal (every other route skips their hooks).
  await app.register(cookie);
  await app.register(
    async (scoped) => {
      scoped.addHook('onRequest', async (req, reply) => {
        const fromQuery = (req.query as Record<string, unknown> | undefined)?.token;
        const bearer = bearerToken(req.headers.authorization);
        // The admin gate, with the board's ?token= and cookie (bull-board's routes are not descriptors);
        // bull-board installs its own error handler, so answer refusals here.
        try {
          await admin.resolve(req);
        } catch (err) {
          if (!(err instanceof Refusal)) throw err;
          if (err.status === 401 && acceptsHtml(req)) return reply.status(401).type('text/html; charset=utf-8').send(SIGN_IN_PAGE);
          return reply.status(err.status).send(err.body);
        }
        // Verified first: a cookie is never set from a forged or expired token.
        if (typeof fromQuery === 'string') {
          reply.setCookie(COOKIE, fromQuery, { path: BASE, httpOnly: true, sameSite: 'strict', secure });
          return reply.status(303).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(withoutToken(req.url), 303);
        }
        if (!SAFE_METHODS.has(req.method)) {
          const origin = req.headers.origin;
          // A foreign Origin is refused whatever the credential; without one, a cookie's write needs this service's Referer.
          const foreign = origin !== undefined ? !isOwn(req, origin) : bearer === undefined && !isOwn(req, originOf(req.headers.referer));
          if (foreign) return reply.status(403).send({ error: 'forbidden_origin' });
        }
      });
      await scoped.register(serverAdapter.registerPlugin());
    },
    { prefix: BASE },
  );
}

/** Whether a request is a browser's page load (it accepts HTML), not an API client's. */
function acceptsHtml(req: FastifyRequest): boolean {
  return /\btext\/html\b/i.test(req.headers.accept ?? '');
}

/** The request's own path and query, without its `token` parameter. */
function withoutToken(url: string): string {
  const parsed = new URL(url, 'http://board.invalid');
  parsed.searchParams.delete('token');
  return `${parsed.pathname}${parsed.search}`;
}
