import { z } from 'zod';
import type { Db } from '../db/database';
import { route } from '../http/route';
import { createCampaign, listCampaigns } from './campaigns.queries';
import { createdOrderPage } from './created-order';
import { answers, errors } from './schemas';

const createBody = z
  .object({
    brand_id: z.string().min(1),
    name: z.string().trim().min(1).max(200),
    status: z.string().trim().min(1).max(50).default('active'),
    start_date: z.iso.date().nullish(),
    end_date: z.iso.date().nullish(),
    visible: z.boolean().default(true),
  })
  .refine((c) => !c.start_date || !c.end_date || c.start_date <= c.end_date, {
    message: 'end_date is before start_date',
    path: ['end_date'],
  });

const listQuery = z.object({ brand_id: z.string().optional(), ...createdOrderPage });

/** /campaigns (docs/api.md#internal-set-up-endpoints): a brand's campaigns; visible=false hides one from the Data API. */
export const campaignRoutes = ({ db }: { db: Db }) => [
  route({
    method: 'POST',
    path: '/campaigns',
    summary: 'Create a campaign of a brand',
    body: createBody,
    responses: { 201: answers.item('The campaign'), ...errors.write },
    async handler({ body }) {
      return createCampaign(db, body);
    },
  }),
  route({
    method: 'GET',
    path: '/campaigns',
    summary: 'Campaigns (of every brand or one) in the order they were created',
    query: listQuery,
    responses: { 200: answers.page('campaigns'), ...errors.read },
    handler: async ({ query: { brand_id, ...page } }) => listCampaigns(db, brand_id, page),
  }),
];
