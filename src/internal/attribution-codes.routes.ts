import { z } from 'zod';
import { labelSchema } from '../attribution/codes/labels';
import { codeCursor, type ListReader, listCodes } from '../attribution/reporting/lists';
import { pageParams } from '../attribution/reporting/paging';
import { idParams, route } from '../http/route';
import { codeItem, createCode, deleteCode, updateCode } from './attribution-codes.queries';
import { answers, errors } from './schemas';

const createBody = z.object({
  brand_id: z.string().min(1),
  creator_id: z.string().min(1),
  label: labelSchema.nullish(),
});

const patchBody = z
  .object({ label: labelSchema.optional(), active: z.boolean().optional() })
  .refine((p) => p.label !== undefined || p.active !== undefined, 'give label or active');

const listQuery = z.object({
  brand_id: z.string().optional(),
  creator_id: z.string().optional(),
  ...pageParams(codeCursor),
});

/** /attribution-codes (docs/api.md#links-codes-and-domains): creator codes, dictated or generated, with their ledger totals. */
export const attributionCodeRoutes = (deps: ListReader) => [
  route({
    method: 'GET',
    path: '/attribution-codes',
    summary: 'Creator codes of every brand (or one brand, one creator) with their totals, by brand and label',
    query: listQuery,
    responses: { 200: answers.page('codes'), ...errors.read },
    handler: async ({ query: { brand_id, creator_id, ...page } }) => listCodes(deps, { brandId: brand_id, creatorId: creator_id }, page),
  }),
  route({
    method: 'GET',
    path: '/attribution-codes/:id',
    summary: 'One code with its totals',
    params: idParams,
    responses: { 200: answers.item('The code'), ...errors.one },
    handler: async ({ params }) => codeItem(deps, params.id),
  }),
  route({
    method: 'POST',
    path: '/attribution-codes',
    summary: "Create a code; without a label, the first free one from the creator's name",
    body: createBody,
    responses: { 201: answers.item('The code'), ...errors.write, 409: errors.code('label_taken') },
    async handler({ body }) {
      return createCode(deps, body);
    },
  }),
  route({
    method: 'PATCH',
    path: '/attribution-codes/:id',
    summary: 'Change the label or active',
    params: idParams,
    body: patchBody,
    responses: { 200: answers.item('The code'), ...errors.write, ...errors.one, 409: errors.code('label_taken') },
    handler: async ({ params, body }) => updateCode(deps, params.id, body),
  }),
  route({
    method: 'DELETE',
    path: '/attribution-codes/:id',
    summary: 'Delete a code nothing was credited with',
    params: idParams,
    responses: { 204: null, ...errors.one, 409: errors.code('code_in_use') },
    async handler({ params }) {
      await deleteCode(deps, params.id);
    },
  }),
];
