import { type Kysely, sql } from 'kysely';

/**
 * A delivery's queue job: the fan-out queues one job per endpoint for a batch of deliveries, and
 * the delivery sweeper queues a lost job again under the same id (NULL: the delivery's own id).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE webhook_deliveries ADD COLUMN job_id text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE webhook_deliveries DROP COLUMN IF EXISTS job_id`.execute(db);
}
