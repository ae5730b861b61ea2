import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  checkDomain,
  domainCursor,
  findDomain,
  hostingStatus,
  listDomains,
  registerDomain,
  removeDomain,
  toDomainItem,
} from '../attribution/domains/domains';
import { pageParams } from '../attribution/reporting/paging';
import type { Services } from '../services';

const createDomain = z.object({
  hostname: z.string().max(300),
  brand_id: z.string().min(1).nullish(),
});

const domainParams = z.object({ id: z.string() });

const listQuery = z.object(pageParams(domainCursor));

/** /attribution-domains (SPEC 4.5): shared and brand-owned vanity domains, as the operator sees them. */
export async function attributionDomainRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const { db } = services;

  app.get('/attribution-domains', async (req) => {
    const page = listQuery.parse(req.query);
    return { ...(await listDomains(db, 'operator', page)), hosting: hostingStatus() };
  });

  app.get('/attribution-domains/:id', async (req) => {
    return toDomainItem(await findDomain(db, domainParams.parse(req.params).id, 'operator'));
  });

  app.post('/attribution-domains', async (req, reply) => {
    const body = createDomain.parse(req.body);
    const row = await registerDomain(services, body.brand_id ?? null, body.hostname);
    return reply.status(201).send(toDomainItem(row));
  });

  app.post('/attribution-domains/:id/check', async (req) => {
    const domain = await findDomain(db, domainParams.parse(req.params).id, 'operator');
    return toDomainItem(await checkDomain(services, domain));
  });

  app.delete('/attribution-domains/:id', async (req, reply) => {
    await removeDomain(services, domainParams.parse(req.params).id, 'operator');
    return reply.status(204).send();
  });
}
