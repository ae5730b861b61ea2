import { randomBytes } from 'node:crypto';
import type { Selectable, SelectQueryBuilder } from 'kysely';
import { z } from 'zod';
import type { Database, DnsRecord, DomainsTable } from '../../db/schema';
import type { ChangeFeed } from '../../db/change-feed';
import type { Db } from '../../db/database';
import type { Logger } from '../../logger';
import { conflict, invalidRequest, notFound } from '../../refusal';
import { newId } from '../../secrets';
import { toPage } from '../reporting/paging';
import { normalizeHostname, serviceHostname } from './hostname';
import { dnsInstructions, lookUpRecords } from './verification';

/**
 * Vanity domains (SPEC 2.10): shared ones maintained by the operator (brand_id null)
 * and brands' custom domains. Used by the internal routes (scope 'operator') and the
 * portal routes (scope { brandId }).
 */

export type DomainRow = Selectable<DomainsTable>;

/** What the domain functions use: Postgres, the link-change feed, and where and how DNS is checked. */
export type DomainDeps = { db: Db; linkChanges: ChangeFeed; log: Logger; publicBaseUrl: string; dnsServers: string[] | undefined };

/** Who acts: the operator may change any domain; a brand only its own custom domains. */
export type DomainScope = 'operator' | { brandId: string };

export type VerificationStatus = 'pending' | 'verified';

/**
 * `pending` until the domain is verified. No hosting provider is configured to issue
 * certificates, so a verified domain's certificate is `unmanaged`: TLS is terminated
 * by whatever the operator runs in front of the service.
 */
export type CertificateStatus = 'pending' | 'unmanaged';

export type DomainItem = {
  id: string;
  hostname: string;
  shared: boolean;
  brand_id: string | null;
  verification: { status: string; checked_at: Date | null };
  dns: DnsRecord[];
  certificate: { status: string };
  created_at: Date;
};

/** Hosting-provider management (attaching domains, issuing certificates) is optional; none is integrated. */
export function hostingStatus(): { configured: boolean; provider: string | null } {
  return { configured: false, provider: null };
}

export function toDomainItem(row: DomainRow): DomainItem {
  return {
    id: row.id,
    hostname: row.hostname,
    shared: row.brand_id === null,
    brand_id: row.brand_id,
    verification: { status: row.verification_status, checked_at: row.verification_checked_at },
    dns: row.dns,
    certificate: { status: row.certificate_status },
    created_at: row.created_at,
  };
}

/**
 * Registers a domain (brandId null: shared) with a fresh verification token and the
 * DNS records its owner must create. It starts `pending`: nothing is looked up before
 * the owner had a chance to create the records; POST .../check does that.
 */
export async function registerDomain({ db, publicBaseUrl, linkChanges }: Omit<DomainDeps, 'log' | 'dnsServers'>, brandId: string | null, hostname: string) {
  const normalized = normalizeHostname(hostname);
  if (!normalized) {
    throw invalidRequest([{ path: 'hostname', message: 'not a valid host name' }]);
  }
  // The service's own host is taken by its API: as a domain it would turn every request into a visit.
  if (normalized === serviceHostname(publicBaseUrl)) throw conflict('domain_taken');
  if (brandId !== null) {
    const brand = await db.selectFrom('brands').select('id').where('id', '=', brandId).executeTakeFirst();
    if (!brand) throw invalidRequest([{ path: 'brand_id', message: 'unknown brand' }]);
  }
  const token = randomBytes(16).toString('hex');
  const row = await db
    .insertInto('domains')
    .values({
      id: newId(),
      hostname: normalized,
      brand_id: brandId,
      verification_token: token,
      dns: JSON.stringify(dnsInstructions(normalized, token, publicBaseUrl)),
    })
    .onConflict((oc) => oc.column('hostname').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (!row) throw conflict('domain_taken');
  linkChanges.changed(); // clicks on the new host may have been answered "no link"
  return row;
}

/**
 * Re-runs verification with fresh DNS instructions (PUBLIC_BASE_URL may have changed): all records
 * found, verified; one absent or different, pending. Failed look-ups prove nothing, so the status
 * stays (a new domain stays pending).
 */
export async function checkDomain({ db, publicBaseUrl, dnsServers, log }: Omit<DomainDeps, 'linkChanges'>, domain: DomainRow) {
  const dns = dnsInstructions(domain.hostname, domain.verification_token, publicBaseUrl);
  const states = await lookUpRecords(dns, dnsServers);
  let status = domain.verification_status as VerificationStatus;
  if (states.every((s) => s === 'found')) status = 'verified';
  else if (states.includes('missing')) status = 'pending';
  else log.warn({ hostname: domain.hostname }, 'domain verification: DNS look-ups failed; status unchanged');
  const certificate: CertificateStatus = status === 'verified' ? 'unmanaged' : 'pending';
  const row = await db
    .updateTable('domains')
    .set({ verification_status: status, verification_checked_at: new Date(), dns: JSON.stringify(dns), certificate_status: certificate })
    .where('id', '=', domain.id)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw notFound();
  return row;
}

/** A domain the scope may change (check, remove); 404 otherwise. */
export async function findDomain(db: Db, id: string, scope: DomainScope) {
  const row = await writable(db.selectFrom('domains').selectAll().where('id', '=', id), scope).executeTakeFirst();
  if (!row) throw notFound();
  return row;
}

export const domainCursor = z.tuple([z.string()]);

/** Domains the scope sees, by hostname: all for the operator; shared ones plus its own for a brand. */
export async function listDomains(db: Db, scope: DomainScope, page: { limit: number; cursor?: z.output<typeof domainCursor> }) {
  let q = db.selectFrom('domains').selectAll().orderBy('hostname').limit(page.limit + 1);
  if (scope !== 'operator') {
    const { brandId } = scope;
    q = q.where((eb) => eb.or([eb('brand_id', 'is', null), eb('brand_id', '=', brandId)]));
  }
  if (page.cursor) q = q.where('hostname', '>', page.cursor[0]);
  const { data, pagination } = toPage(await q.execute(), page.limit, (row) => [row.hostname]);
  return { data: data.map(toDomainItem), pagination };
}

/** Removes a domain no link uses; 409 domain_has_links otherwise. */
export async function removeDomain({ db, linkChanges }: Pick<DomainDeps, 'db' | 'linkChanges'>, id: string, scope: DomainScope): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // The row lock orders this against link creation, which key-share locks the domain:
    // a link created concurrently is either seen below or finds the domain gone.
    const domain = await writable(trx.selectFrom('domains').select('id').where('id', '=', id), scope).forUpdate().executeTakeFirst();
    if (!domain) throw notFound();
    const link = await trx.selectFrom('links').select('id').where('domain_id', '=', id).limit(1).executeTakeFirst();
    if (link) throw conflict('domain_has_links');
    await trx.deleteFrom('domains').where('id', '=', id).execute();
  });
  linkChanges.changed();
}

function writable<O>(q: SelectQueryBuilder<Database, 'domains', O>, scope: DomainScope) {
  return scope === 'operator' ? q : q.where('brand_id', '=', scope.brandId);
}
