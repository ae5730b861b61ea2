import { z } from 'zod';
import { route } from '../http/route';
import { invalidRequest } from '../refusal';
import type { InternalDeps } from './deps';
import {
  PlacementOwnerConflict,
  placementReferenceProblems,
  placementSchema,
  queuePlacements,
  queueSnapshots,
  type ReferenceProblem,
  snapshotSchema,
} from '../placements/intake';
import { errors } from './schemas';

/** The two batch endpoints take up to 10,000 items in bodies of up to 16 MiB (docs/api.md#internal-set-up-endpoints). */
const BATCH_BODY_LIMIT = 16 * 1024 * 1024;
const MAX_ITEMS = 10_000;

const placementsBody = z.object({ placements: z.array(placementSchema).min(1).max(MAX_ITEMS) });
const snapshotsBody = z.object({ snapshots: z.array(snapshotSchema).min(1).max(MAX_ITEMS) });

/** 422 invalid_request naming the refused items (the first 50). */
const refused = (problems: ReferenceProblem[]) =>
  invalidRequest(problems.slice(0, 50).map((p) => ({ path: `placements.${p.index}.${p.field}`, message: p.message })));

const accepted = z.object({ accepted: z.number().int().describe('Items queued') }).describe('Queued: visible to reads once written');

/** What both batch endpoints are: a POST of up to BATCH_BODY_LIMIT, queued (202) or refused whole. */
const batchIntake = {
  method: 'POST' as const,
  bodyLimit: BATCH_BODY_LIMIT,
  responses: { 202: accepted, ...errors.write, 413: errors.code('payload_too_large') },
};

/**
 * Placements and their metric snapshots are facts: validated here, then queued for
 * ClickHouse (202), visible to reads once the worker has written them.
 */
export const placementRoutes = (deps: Pick<InternalDeps, 'db' | 'queues'>) => [
  route({
    ...batchIntake,
    path: '/placements',
    summary: 'Queue up to 10,000 placements (upsert by id; an id stays with its brand)',
    body: placementsBody,
    async handler({ body: { placements } }) {
      const problems = await placementReferenceProblems(deps.db, placements);
      if (problems.length) throw refused(problems);
      try {
        return { accepted: await queuePlacements(deps, placements) };
      } catch (err) {
        // Another brand claimed one of these ids between the check and the claim.
        if (err instanceof PlacementOwnerConflict) throw refused(err.problems);
        throw err;
      }
    },
  }),
  route({
    ...batchIntake,
    path: '/placement-metrics',
    summary: 'Queue up to 10,000 metric snapshots of placements',
    body: snapshotsBody,
    async handler({ body: { snapshots } }) {
      return { accepted: await queueSnapshots(deps.queues, snapshots) };
    },
  }),
];
