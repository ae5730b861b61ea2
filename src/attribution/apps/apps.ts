import { z } from 'zod';
import type { Db } from '../../db/database';

/**
 * A brand's apps as the association files name them (docs/api.md, "Apps"; docs/link-host.md):
 * the iOS team and bundle ids, the Android package and its signing certificates' SHA-256
 * fingerprints. Either may be null (that platform's file is not served).
 */
export type BrandApps = {
  ios: { team_id: string; bundle_id: string } | null;
  android: { package: string; sha256_cert_fingerprints: string[] } | null;
};

const NONE: BrandApps = { ios: null, android: null };

const iosApp = z.object({
  team_id: z.string().regex(/^[A-Z0-9]{10}$/, '10 characters A-Z and 0-9'),
  bundle_id: z
    .string()
    .max(155)
    .regex(/^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/, 'reverse-DNS: at least two labels of letters, digits and -'),
});

const androidApp = z.object({
  package: z.string().regex(/^[a-zA-Z][a-zA-Z0-9_]*(\.[a-zA-Z][a-zA-Z0-9_]*)+$/, "Android's rule: at least two segments, each a letter then letters, digits or _"),
  sha256_cert_fingerprints: z
    .array(z.string().regex(/^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){31}$/, '32 colon-separated hex pairs'))
    .min(1)
    .max(10)
    .transform((list) => list.map((f) => f.toUpperCase())),
});

/** PUT /apps: both platforms, an omitted one is null. */
export const brandAppsBody = z.object({
  ios: iosApp.nullish().transform((v) => v ?? null),
  android: androidApp.nullish().transform((v) => v ?? null),
});

export async function brandApps(db: Db, brandId: string): Promise<BrandApps> {
  const row = await db.selectFrom('brand_apps').selectAll().where('brand_id', '=', brandId).executeTakeFirst();
  if (!row) return NONE;
  return {
    ios: row.ios_team_id && row.ios_bundle_id ? { team_id: row.ios_team_id, bundle_id: row.ios_bundle_id } : null,
    android:
      row.android_package && row.android_fingerprints?.length
        ? { package: row.android_package, sha256_cert_fingerprints: row.android_fingerprints }
        : null,
  };
}

/** Replaces both platforms' identifiers. */
export async function setBrandApps(db: Db, brandId: string, apps: BrandApps): Promise<BrandApps> {
  const values = {
    ios_team_id: apps.ios?.team_id ?? null,
    ios_bundle_id: apps.ios?.bundle_id ?? null,
    android_package: apps.android?.package ?? null,
    android_fingerprints: apps.android?.sha256_cert_fingerprints ?? null,
    updated_at: new Date(),
  };
  await db
    .insertInto('brand_apps')
    .values({ brand_id: brandId, ...values })
    .onConflict((oc) => oc.column('brand_id').doUpdateSet(values))
    .execute();
  return brandApps(db, brandId);
}

export const APPLE_ASSOCIATION_PATH = '/.well-known/apple-app-site-association';
export const ANDROID_ASSETLINKS_PATH = '/.well-known/assetlinks.json';

/** The association file a path names for these apps, or null when that platform is not set. */
export function associationFile(apps: BrandApps, path: string): unknown | null {
  if (path === APPLE_ASSOCIATION_PATH && apps.ios) {
    return { applinks: { details: [{ appIDs: [`${apps.ios.team_id}.${apps.ios.bundle_id}`], components: [{ '/': '/*' }] }] } };
  }
  if (path === ANDROID_ASSETLINKS_PATH && apps.android) {
    return [
      {
        relation: ['delegate_permission/common.handle_all_urls'],
        target: { namespace: 'android_app', package_name: apps.android.package, sha256_cert_fingerprints: apps.android.sha256_cert_fingerprints },
      },
    ];
  }
  return null;
}

/**
 * The association file served at `path` on a served attribution domain: built from the apps of the
 * brand the domain belongs to (an operator domain registered for it, or its verified portal domain);
 * null on a shared domain (one brand's app would open every brand's links there) or when that
 * platform is not set.
 */
export async function associationFileOn(db: Db, hostname: string, path: string): Promise<unknown | null> {
  if (path !== APPLE_ASSOCIATION_PATH && path !== ANDROID_ASSETLINKS_PATH) return null;
  const domain = await db
    .selectFrom('domains')
    .select('brand_id')
    .where('hostname', '=', hostname)
    .where((eb) => eb.or([eb('registered_by', '=', 'operator'), eb('verification_status', '=', 'verified')]))
    .executeTakeFirst();
  if (!domain?.brand_id) return null;
  return associationFile(await brandApps(db, domain.brand_id), path);
}
