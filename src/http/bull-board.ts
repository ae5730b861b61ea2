import cookie from '@fastify/cookie';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { FastifyInstance } from 'fastify';
import type { FactQueues } from '../queues/queues';
import { adminTokenVerifier } from './admin-auth';
import { bearerToken } from '../secrets';
import { HttpError } from './errors';

const BASE = '/admin/queues';

/**
 * bull-board for operators, behind the admin JWT. A browser cannot send a Bearer
 * header, so `/admin/queues?token=<jwt>` stores the token in an HttpOnly cookie
 * scoped to this path; every request is still verified.
 */
export async function bullBoardRoutes(app: FastifyInstance, { queues, adminJwtSecret }: { queues: FactQueues; adminJwtSecret: string }) {
  const serverAdapter = new FastifyAdapter();
  createBullBoard({
    queues: Object.values(queues.queues).map((q) => new BullMQAdapter(q)),
    serverAdapter,
  });
  serverAdapter.setBasePath(BASE);
  const verifyAdminToken = adminTokenVerifier(adminJwtSecret);
  // Cookies only where they are read: the board and the portal (every other route skips their hooks).
  await app.register(cookie);
  await app.register(
    async (scoped) => {
      scoped.addHook('onRequest', async (req, reply) => {
        const fromQuery = (req.query as Record<string, unknown> | undefined)?.token;
        // Only here does the cookie stand for the Bearer header: the internal API never takes it.
        const token =
          typeof fromQuery === 'string' ? fromQuery : (bearerToken(req.headers.authorization) ?? req.cookies.svc_admin);
        // bull-board installs its own error handler, so answer refusals here.
        try {
          verifyAdminToken(token);
        } catch (err) {
          if (err instanceof HttpError) return reply.status(err.status).send(err.body);
          throw err;
        }
        // Verified first: a cookie is never set from a forged or expired token.
        if (typeof fromQuery === 'string') {
          reply.setCookie('svc_admin', fromQuery, {
            path: BASE,
            httpOnly: true,
            sameSite: 'strict',
            secure: req.protocol === 'https',
          });
        }
      });
      await scoped.register(serverAdapter.registerPlugin());
    },
    { prefix: BASE },
  );
}
