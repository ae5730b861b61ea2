import type { Db } from '../../db/database';

/** Links joined to the domain they are served on, with their address: id, domain (hostname), slug. */
export function linksWithDomain(db: Db) {
  return db
    .selectFrom('links as l')
    .innerJoin('domains as d', 'd.id', 'l.domain_id')
    .select(['l.id', 'd.hostname as domain', 'l.slug']);
}
