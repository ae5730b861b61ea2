import type { Insertable } from 'kysely';
import type { ChangeFeed } from '../db/change-feed';
import type { LinksTable } from '../db/schema';
import { type ListReader, listLinks } from '../attribution/reporting/lists';
import { conflict, invalidRequest, notFound, type RefusalDetail } from '../refusal';

/** The store URL rule of app links (docs/api.md#links-codes-and-domains), checked on create and again on every change. */
export const STORE_URL_REQUIRED = 'an app link needs ios_url or android_url';
export const hasStoreUrl = (l: { type: string; ios_url?: string | null; android_url?: string | null }) =>
  l.type !== 'app' || Boolean(l.ios_url || l.android_url);

/** A link as created: the columns of `links` but those the database fills. */
export type NewLink = Omit<Insertable<LinksTable>, 'id' | 'active' | 'created_at' | 'updated_at'>;
export type LinkPatch = { active?: boolean; destination_url?: string; ios_url?: string | null; android_url?: string | null; deep_link?: string | null };

type Deps = ListReader & { linkChanges: ChangeFeed };

/** One link with its totals, or not_found. */
export async function linkItem(deps: ListReader, id: number) {
  const { data } = await listLinks(deps, { ids: [id] }, { limit: 1 });
  if (!data[0]) throw notFound();
  return data[0];
}

/** Creates a link: 422 naming unknown references or another brand's domain, 409 slug_taken. */
export async function createLink(deps: Deps, link: NewLink) {
  const id = await deps.db.transaction().execute(async (trx) => {
    const brand = await trx.selectFrom('brands').select('id').where('id', '=', link.brand_id).executeTakeFirst();
    const creator = await trx.selectFrom('creators').select('id').where('id', '=', link.creator_id).executeTakeFirst();
    // Key-share lock: the domain cannot be removed before this link is committed (removeDomain).
    const domain = await trx.selectFrom('domains').select('brand_id').where('id', '=', link.domain_id).forKeyShare().executeTakeFirst();
    const problems: RefusalDetail[] = [];
    if (!brand) problems.push({ path: 'brand_id', message: 'unknown brand' });
    if (!creator) problems.push({ path: 'creator_id', message: 'unknown creator' });
    if (!domain) problems.push({ path: 'domain_id', message: 'unknown domain' });
    else if (domain.brand_id !== null && domain.brand_id !== link.brand_id) {
      problems.push({ path: 'domain_id', message: "another brand's custom domain" });
    }
    if (problems.length) throw invalidRequest(problems);
    const row = await trx
      .insertInto('links')
      .values(link)
      // The only unique keys besides the serial id are the domain's slugs.
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!row) throw conflict('slug_taken');
    return row.id;
  });
  deps.linkChanges.changed(); // this process serves the new link at once
  return linkItem(deps, id);
}

/** Changes a link; an app link must keep a store URL (422). */
export async function updateLink(deps: Deps, id: number, patch: LinkPatch) {
  await deps.db.transaction().execute(async (trx) => {
    const link = await trx.selectFrom('links').select(['type', 'ios_url', 'android_url']).where('id', '=', id).forUpdate().executeTakeFirst();
    if (!link) throw notFound();
    if (!hasStoreUrl({ ...link, ...patch })) throw invalidRequest([{ path: 'ios_url', message: STORE_URL_REQUIRED }]);
    await trx
      .updateTable('links')
      .set({ ...patch, updated_at: new Date() })
      .where('id', '=', id)
      .execute();
  });
  deps.linkChanges.changed();
  return linkItem(deps, id);
}
