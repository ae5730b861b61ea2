import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HttpError } from '../http/errors';
import { platformSchema } from '../platforms';
import type { Services } from '../services';
import { chDateTime, nextVersion } from '../warehouse/values';

/** The two batch endpoints take up to 10,000 items in bodies of up to 16 MiB (CONTRACT 4). */
const BATCH_BODY_LIMIT = 16 * 1024 * 1024;
const MAX_ITEMS = 10_000;

const optionalText = (max: number) => z.string().max(max).nullish();
const placementSchema = z.object({
  id: z.string().trim().min(1).max(128),
  brand_id: z.string().min(1),
  campaign_id: z.string().min(1),
  creator_id: z.string().min(1).nullable(),
  platform: platformSchema,
  url: optionalText(2000),
  thumbnail_url: optionalText(2000),
  caption: optionalText(10_000),
  posted_at: z.iso.datetime({ offset: true }),
});
const placementsBody = z.object({ placements: z.array(placementSchema).min(1).max(MAX_ITEMS) });

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const snapshotSchema = z.object({
  placement_id: z.string().trim().min(1).max(128),
  date: z.iso.date(),
  views: count,
  likes: count,
  comments: count,
  shares: count.nullable(),
});
const snapshotsBody = z.object({ snapshots: z.array(snapshotSchema).min(1).max(MAX_ITEMS) });

type Problem = { path: string; message: string };

/**
 * Placements and their metric snapshots are facts: validated here, then queued for
 * ClickHouse (202), visible to reads once the worker has written them.
 */
export async function placementRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const { db, queues } = services;

  app.post('/placements', { bodyLimit: BATCH_BODY_LIMIT }, async (req, reply) => {
    const { placements } = placementsBody.parse(req.body);
    const problems = await checkReferences(services, placements);
    if (problems.length) throw new HttpError(422, { error: 'invalid_request', details: problems });
    const rows = placements.map((p) => ({
      brand_id: p.brand_id,
      placement_id: p.id,
      campaign_id: p.campaign_id,
      creator_id: p.creator_id,
      platform: p.platform,
      url: p.url ?? null,
      thumbnail_url: p.thumbnail_url ?? null,
      caption: p.caption ?? null,
      posted_at: chDateTime(new Date(p.posted_at)),
      // Later in the request, or in a later request, replaces earlier.
      version: nextVersion(),
    }));
    await queues.add('placements', rows);
    return reply.status(202).send({ accepted: rows.length });
  });

  app.post('/placement-metrics', { bodyLimit: BATCH_BODY_LIMIT }, async (req, reply) => {
    const { snapshots } = snapshotsBody.parse(req.body);
    const rows = snapshots.map((s) => ({ ...s, version: nextVersion() }));
    await queues.add('placement_metrics', rows);
    return reply.status(202).send({ accepted: rows.length });
  });

  /** Every brand, campaign and creator a batch names must exist, and campaigns belong to the placement's brand. */
  async function checkReferences(_s: Services, placements: z.output<typeof placementSchema>[]): Promise<Problem[]> {
    const brandIds = [...new Set(placements.map((p) => p.brand_id))];
    const campaignIds = [...new Set(placements.map((p) => p.campaign_id))];
    const creatorIds = [...new Set(placements.flatMap((p) => (p.creator_id ? [p.creator_id] : [])))];
    const [brands, campaigns, creators] = await Promise.all([
      db.selectFrom('brands').select('id').where('id', 'in', brandIds).execute(),
      db.selectFrom('campaigns').select(['id', 'brand_id']).where('id', 'in', campaignIds).execute(),
      creatorIds.length
        ? db.selectFrom('creators').select('id').where('id', 'in', creatorIds).execute()
        : Promise.resolve([]),
    ]);
    const brandSet = new Set(brands.map((b) => b.id));
    const campaignBrand = new Map(campaigns.map((c) => [c.id, c.brand_id]));
    const creatorSet = new Set(creators.map((c) => c.id));
    const problems: Problem[] = [];
    placements.forEach((p, i) => {
      if (!brandSet.has(p.brand_id)) problems.push({ path: `placements.${i}.brand_id`, message: 'unknown brand' });
      else if (campaignBrand.get(p.campaign_id) !== p.brand_id)
        problems.push({ path: `placements.${i}.campaign_id`, message: 'unknown campaign for this brand' });
      if (p.creator_id && !creatorSet.has(p.creator_id))
        problems.push({ path: `placements.${i}.creator_id`, message: 'unknown creator' });
    });
    return problems.slice(0, 50);
  }
}
