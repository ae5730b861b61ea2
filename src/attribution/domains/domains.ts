import { randomBytes } from 'node:crypto';
import type { Selectable, SelectQueryBuilder } from 'kysely';
import { z } from 'zod';
import type { Database, DnsRecord, DomainsTable } from '../../db/schema';
import type { ChangeFeed } from '../../db/change-feed';
import type { Db } from '../../db/database';
import type { Logger } from '../../logger';
import { conflict, invalidRequest, notFound, refuse } from '../../refusal';
import { newId } from '../../secrets';
import { toPage } from '../reporting/paging';
import { claimableHostname, normalizeHostname, serviceHostname } from './hostname';
import { dnsInstructions, lookUpRecords } from './verification';

/**
 * Vanity domains (docs/api.md#domains-who-may-serve-a-hostname): shared ones maintained by the operator (brand_id null) and brands'
 * custom domains. The operator's (internal API) are trusted and served at once; a brand's portal
 * claim is served only once its check verifies it, and pending claims reserve nothing: several
 * brands may claim one hostname, the first to verify takes it (docs/api.md, "Domains").
 */

export type DomainRow = Selectable<DomainsTable>;

/** What the domain functions use: Postgres, the link-change feed, and where and how DNS is checked. */
export type DomainDeps = {
  db: Db;
  linkChanges: ChangeFeed;
  log: Logger;
  publicBaseUrl: string;
  dnsServers: string[] | undefined;
  /** Hostnames no brand may claim in the portal (RESERVED_HOSTNAMES). */
  reservedHostnames?: readonly string[];
};

/** Who acts: the operator may change any domain; a brand only its own custom domains. */
export type DomainScope = 'operator' | { brandId: string };

/** Who registered a domain: the operator's are trusted, a brand's portal claim must verify first. */
export type Registrar = 'operator' | 'portal';

export type VerificationStatus = 'pending' | 'verified';

/**
 * `pending` until the domain is verified (or registered by the operator). No hosting provider is
 * configured to issue certificates, so a served domain's certificate is `unmanaged`: TLS is
 * terminated by whatever the operator runs in front of the service.
 */
export type CertificateStatus = 'pending' | 'unmanaged';

export type DomainItem = {
  id: string;
  hostname: string;
  shared: boolean;
  brand_id: string | null;
  registered_by: Registrar;
  /** Whether the link host serves it and POST /clicks resolves it: the operator's, or verified. */
  served: boolean;
  /** A pending claim whose hostname another row now serves: its check answers 409 domain_taken. */
  taken: boolean;
  verification: { status: string; checked_at: Date | null; records_missing_since: Date | null };
  dns: DnsRecord[];
  certificate: { status: string };
  created_at: Date;
};

/** Hosting-provider management (attaching domains, issuing certificates) is optional; none is integrated. */
export function hostingStatus(): { configured: boolean; provider: string | null } {
  return { configured: false, provider: null };
}

/** Whether a row is served: the link host answers on its host and POST /clicks resolves it. */
export function isServed(row: Pick<DomainRow, 'registered_by' | 'verification_status'>): boolean {
  return row.registered_by === 'operator' || row.verification_status === 'verified';
}

export function toDomainItem(row: DomainRow & { taken?: boolean | number | null }): DomainItem {
  const served = isServed(row);
  return {
    id: row.id,
    hostname: row.hostname,
    shared: row.brand_id === null,
    brand_id: row.brand_id,
    registered_by: row.registered_by,
    served,
    taken: !served && Boolean(row.taken),
    verification: {
      status: row.verification_status,
      checked_at: row.verification_checked_at,
      records_missing_since: row.records_missing_since,
    },
    dns: row.dns,
    certificate: { status: row.certificate_status },
    created_at: row.created_at,
  };
}

/** The row's item, with `taken` looked up (a pending claim whose hostname another row serves). */
export async function domainItem(db: Db, row: DomainRow): Promise<DomainItem> {
  return toDomainItem({ ...row, taken: !isServed(row) && (await servedElsewhere(db, row)) });
}

async function servedElsewhere(db: Db, row: Pick<DomainRow, 'id' | 'hostname'>): Promise<boolean> {
  const other = await db
    .selectFrom('domains')
    .select('id')
    .where('hostname', '=', row.hostname)
    .where('id', '<>', row.id)
    .where((eb) => eb.or([eb('registered_by', '=', 'operator'), eb('verification_status', '=', 'verified')]))
    .executeTakeFirst();
  return other !== undefined;
}

/** Postgres's unique_violation: a served hostname or a brand's claim exists already (migrations/0014). */
const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

/**
 * Registers a domain (brandId null: shared) with a fresh verification token and the DNS records
 * its owner must create. The operator's is served at once; a portal claim starts pending and is
 * served once a check verifies it. Taken (409): a hostname already served (verified or the
 * operator's), or already claimed by the same brand. The operator registering a brand's own pending
 * claim makes it an operator domain (same id, its links kept). The portal may not claim the service's
 * host, localhost names or reserved ones (422 invalid_domain).
 */
export async function registerDomain(
  { db, publicBaseUrl, linkChanges, reservedHostnames }: Omit<DomainDeps, 'log' | 'dnsServers'>,
  registrar: Registrar,
  brandId: string | null,
  hostname: string,
): Promise<DomainRow> {
  const normalized = normalizeHostname(hostname);
  if (registrar === 'portal' && (!normalized || !claimableHostname(normalized, publicBaseUrl, reservedHostnames))) {
    throw refuse(422, 'invalid_domain');
  }
  if (!normalized) throw invalidRequest([{ path: 'hostname', message: 'not a valid host name' }]);
  // The service's own host is taken by its API: as a domain it would turn every request into a visit.
  if (normalized === serviceHostname(publicBaseUrl)) throw conflict('domain_taken');
  if (brandId !== null) {
    const brand = await db.selectFrom('brands').select('id').where('id', '=', brandId).executeTakeFirst();
    if (!brand) throw invalidRequest([{ path: 'brand_id', message: 'unknown brand' }]);
  }
  const existing = await db.selectFrom('domains').selectAll().where('hostname', '=', normalized).execute();
  if (existing.some(isServed)) throw conflict('domain_taken');
  const sameBrand = existing.find((d) => d.brand_id === brandId);
  let row: DomainRow | undefined;
  try {
    if (sameBrand && registrar === 'operator') {
      row = await db
        .updateTable('domains')
        .set({ registered_by: 'operator', certificate_status: 'unmanaged' })
        .where('id', '=', sameBrand.id)
        .where('registered_by', '=', 'portal')
        .returningAll()
        .executeTakeFirst();
    } else if (!sameBrand) {
      const token = randomBytes(16).toString('hex');
      row = await db
        .insertInto('domains')
        .values({
          id: newId(),
          hostname: normalized,
          brand_id: brandId,
          registered_by: registrar,
          certificate_status: registrar === 'operator' ? 'unmanaged' : 'pending',
          verification_token: token,
          dns: JSON.stringify(dnsInstructions(normalized, token, publicBaseUrl)),
        })
        .returningAll()
        .executeTakeFirst();
    }
  } catch (err) {
    // Registered or verified by someone else in between.
    if (isUniqueViolation(err)) throw conflict('domain_taken');
    throw err;
  }
  if (!row) throw conflict('domain_taken');
  if (isServed(row)) linkChanges.changed(); // clicks on the new host may have been answered "no link"
  return row;
}

/**
 * Re-runs verification with fresh DNS instructions (PUBLIC_BASE_URL may have changed). All records
 * found: verified. One absent or different: a pending domain stays pending; a verified one stays
 * verified and served, with the time its records were first found missing. Failed look-ups prove
 * nothing: the status stays. A pending claim whose hostname another row serves: 409 domain_taken.
 */
export async function checkDomain({ db, publicBaseUrl, dnsServers, log, linkChanges }: DomainDeps, domain: DomainRow): Promise<DomainRow> {
  if (!isServed(domain) && (await servedElsewhere(db, domain))) throw conflict('domain_taken');
  const dns = dnsInstructions(domain.hostname, domain.verification_token, publicBaseUrl);
  const states = await lookUpRecords(dns, dnsServers);
  const now = new Date();
  let status = domain.verification_status as VerificationStatus;
  let missingSince = domain.records_missing_since;
  if (states.every((s) => s === 'found')) {
    status = 'verified';
    missingSince = null;
  } else if (states.includes('missing')) {
    if (status === 'verified') missingSince ??= now;
  } else log.warn({ hostname: domain.hostname }, 'domain verification: DNS look-ups failed; status unchanged');
  const served = domain.registered_by === 'operator' || status === 'verified';
  const certificate: CertificateStatus = served ? 'unmanaged' : 'pending';
  let row: DomainRow | undefined;
  try {
    row = await db
      .updateTable('domains')
      .set({
        verification_status: status,
        verification_checked_at: now,
        records_missing_since: missingSince,
        dns: JSON.stringify(dns),
        certificate_status: certificate,
      })
      .where('id', '=', domain.id)
      .returningAll()
      .executeTakeFirst();
  } catch (err) {
    // Another claim of this hostname verified first.
    if (isUniqueViolation(err)) throw conflict('domain_taken');
    throw err;
  }
  if (!row) throw notFound();
  if (served !== isServed(domain)) linkChanges.changed();
  return row;
}

/** A domain the scope may change (check, remove); 404 otherwise. */
export async function findDomain(db: Db, id: string, scope: DomainScope) {
  const row = await writable(db.selectFrom('domains').selectAll().where('id', '=', id), scope).executeTakeFirst();
  if (!row) throw notFound();
  return row;
}

export const domainCursor = z.tuple([z.string(), z.string()]);

/**
 * Domains the scope sees, by hostname then id (pending claims share hostnames): all for the
 * operator; shared ones plus its own for a brand. Each says whether another row took its hostname.
 */
export async function listDomains(db: Db, scope: DomainScope, page: { limit: number; cursor?: z.output<typeof domainCursor> }) {
  let q = db
    .selectFrom('domains')
    .selectAll('domains')
    .select((eb) =>
      eb
        .exists(
          eb
            .selectFrom('domains as o')
            .select('o.id')
            .whereRef('o.hostname', '=', 'domains.hostname')
            .whereRef('o.id', '<>', 'domains.id')
            .where((w) => w.or([w('o.registered_by', '=', 'operator'), w('o.verification_status', '=', 'verified')])),
        )
        .as('taken'),
    )
    .orderBy('domains.hostname')
    .orderBy('domains.id')
    .limit(page.limit + 1);
  if (scope !== 'operator') {
    const { brandId } = scope;
    q = q.where((eb) => eb.or([eb('domains.brand_id', 'is', null), eb('domains.brand_id', '=', brandId)]));
  }
  if (page.cursor) {
    const [hostname, id] = page.cursor;
    q = q.where((eb) => eb(eb.refTuple('domains.hostname', 'domains.id'), '>', eb.tuple(hostname, id)));
  }
  const { data, pagination } = toPage(await q.execute(), page.limit, (row) => [row.hostname, row.id]);
  return { data: data.map((row) => toDomainItem(row)), pagination };
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
