import type { Db } from '../../db/database';

/** Links joined to the domain they are served on, with their address: id, domain (hostname), slug. */
export function linksWithDomain(db: Db) {
  return db
    .selectFrom('links as l')
    .innerJoin('domains as d', 'd.id', 'l.domain_id')
    .select(['l.id', 'd.hostname as domain', 'l.slug']);
}

/** A link's deep link as stored now (null: none, or no such link). */
export async function deepLinkOf(db: Db, linkId: number): Promise<string | null> {
  const row = await db.selectFrom('links').select('deep_link').where('id', '=', linkId).executeTakeFirst();
  return row?.deep_link ?? null;
}
