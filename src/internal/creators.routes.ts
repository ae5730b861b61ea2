import { z } from 'zod';
import { idParams, route } from '../http/route';
import { platformSchema } from '../platforms';
import type { InternalDeps } from './deps';
import { createdOrderPage } from './created-order';
import { createCreator, findCreator, listCreators } from './creators.queries';
import { answers, errors } from './schemas';

const handleSchema = z.object({ platform: platformSchema, handle: z.string().trim().min(1).max(200) });
const createBody = z.object({
  name: z.string().trim().min(1).max(200),
  first_name: z.string().trim().min(1).max(100).nullish(),
  handles: z.array(handleSchema).max(20).optional(),
  followers: z.number().int().min(0).nullish(),
});
const listQuery = z.object(createdOrderPage);

/** Creators are shared by brands: a creator may post for several of them. */
export const creatorRoutes = (deps: Pick<InternalDeps, 'db' | 'queues' | 'log'>) => [
  route({
    method: 'POST',
    path: '/creators',
    summary: 'Create a creator',
    body: createBody,
    responses: { 201: answers.item('The creator'), ...errors.write },
    async handler({ body }) {
      return createCreator(deps, body);
    },
  }),
  route({
    method: 'GET',
    path: '/creators',
    summary: 'Creators in the order they were created',
    query: listQuery,
    responses: { 200: answers.page('creators'), ...errors.read },
    handler: async ({ query }) => listCreators(deps.db, query),
  }),
  route({
    method: 'GET',
    path: '/creators/:id',
    summary: 'One creator',
    params: idParams,
    responses: { 200: answers.item('The creator'), ...errors.one },
    handler: async ({ params }) => findCreator(deps.db, params.id),
  }),
];
