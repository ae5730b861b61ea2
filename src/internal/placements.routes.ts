import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HttpError } from '../http/errors';
import type { Services } from '../services';
import {
  PlacementOwnerConflict,
  placementReferenceProblems,
  placementSchema,
  queuePlacements,
  queueSnapshots,
  type ReferenceProblem,
  snapshotSchema,
} from './placement-facts';

/** The two batch endpoints take up to 10,000 items in bodies of up to 16 MiB (CONTRACT 4). */
const BATCH_BODY_LIMIT = 16 * 1024 * 1024;
const MAX_ITEMS = 10_000;

const placementsBody = z.object({ placements: z.array(placementSchema).min(1).max(MAX_ITEMS) });
const snapshotsBody = z.object({ snapshots: z.array(snapshotSchema).min(1).max(MAX_ITEMS) });

/** 422 invalid_request naming the refused items (the first 50). */
const refused = (problems: ReferenceProblem[]) =>
  new HttpError(422, {
    error: 'invalid_request',
    details: problems.slice(0, 50).map((p) => ({ path: `placements.${p.index}.${p.field}`, message: p.message })),
  });

/**
 * Placements and their metric snapshots are facts: validated here, then queued for
 * ClickHouse (202), visible to reads once the worker has written them.
 */
export async function placementRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const { db, queues } = services;

  app.post('/placements', { bodyLimit: BATCH_BODY_LIMIT }, async (req, reply) => {
    const { placements } = placementsBody.parse(req.body);
    const problems = await placementReferenceProblems(db, placements);
    if (problems.length) throw refused(problems);
    try {
      return reply.status(202).send({ accepted: await queuePlacements(services, placements) });
    } catch (err) {
      // Another brand claimed one of these ids between the check and the claim.
      if (err instanceof PlacementOwnerConflict) throw refused(err.problems);
      throw err;
    }
  });

  app.post('/placement-metrics', { bodyLimit: BATCH_BODY_LIMIT }, async (req, reply) => {
    const { snapshots } = snapshotsBody.parse(req.body);
    return reply.status(202).send({ accepted: await queueSnapshots(queues, snapshots) });
  });
}
