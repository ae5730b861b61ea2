import type { ColumnType, Generated } from 'kysely';

/** Kysely's view of the Postgres tables in migrations/. Add a table here with its migration. */
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

export interface BrandsTable {
  id: string;
  name: string;
  logo_url: string | null;
  default_platforms: string[];
  pixel_key: string;
  created_at: CreatedAt;
}

export interface ApiKeysTable {
  id: string;
  brand_id: string;
  name: string | null;
  key_hash: string;
  key_prefix: string;
  created_at: CreatedAt;
  revoked_at: Date | null;
}

export interface PortalUsersTable {
  id: string;
  brand_id: string;
  email: string;
  password_hash: string;
  created_at: CreatedAt;
}

export interface CreatorsTable {
  id: string;
  name: string;
  first_name: string | null;
  handles: ColumnType<CreatorHandle[], string, string>;
  followers: number | null;
  created_at: CreatedAt;
}

export type CreatorHandle = { platform: string; handle: string };

export interface CampaignsTable {
  id: string;
  brand_id: string;
  name: string;
  status: string;
  start_date: string | null;
  end_date: string | null;
  visible: Generated<boolean>;
  created_at: CreatedAt;
}

export type DnsRecord = { type: string; name: string; value: string };

export interface DomainsTable {
  id: string;
  hostname: string;
  brand_id: string | null;
  verification_status: Generated<string>;
  verification_token: string;
  verification_checked_at: Date | null;
  dns: ColumnType<DnsRecord[], string | undefined, string>;
  certificate_status: Generated<string>;
  /** operator: the internal API's, served at once; portal: a brand's claim, served once verified (migrations/0014). */
  registered_by: Generated<'operator' | 'portal'>;
  /** Set when a check of a verified domain first found its records gone; cleared when found again. */
  records_missing_since: Date | null;
  created_at: CreatedAt;
}

export interface LinksTable {
  id: Generated<number>;
  brand_id: string;
  creator_id: string;
  domain_id: string;
  slug: string;
  type: 'web' | 'app';
  destination_url: string;
  ios_url: string | null;
  android_url: string | null;
  /** Where an app opens on this link (migrations/0017): a path or an app URL; null for none. */
  deep_link: string | null;
  active: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface CreatorCodesTable {
  id: string;
  brand_id: string;
  creator_id: string;
  label: string;
  active: Generated<boolean>;
  credited_count: Generated<number>;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface InstallsTable {
  id: string;
  brand_id: string;
  install_id: string;
  platform: string;
  attributed: boolean;
  resolution_method: string;
  confidence: number | null;
  link_id: number | null;
  code_id: string | null;
  code_label: string | null;
  creator_id: string | null;
  app_version: string | null;
  occurred_at: ColumnType<Date, Date | string, never>;
  recorded_at: CreatedAt;
  /** The credited link's deep link when the install was recorded (migrations/0017). */
  deep_link: string | null;
}

export interface LedgerEventsTable {
  id: string;
  brand_id: string;
  event_type: string;
  transaction_id: string;
  external_user_id: string | null;
  /** numeric(18,4): pg returns it as a string. */
  amount: ColumnType<string, string | number, string | number>;
  currency: string;
  source: string;
  click_token: string | null;
  link_id: number | null;
  creator_id: string | null;
  code_id: string | null;
  code_label: string | null;
  resolution_method: string;
  confidence: number | null;
  sandbox: Generated<boolean>;
  /** Written by a provider webhook; public rows (pixel, SDK) are not (migration 0013). */
  verified: Generated<boolean>;
  /** The id of the public row of the same key this verified row replaces, else null. */
  supersedes: string | null;
  occurred_at: ColumnType<Date, Date | string, never>;
  recorded_at: CreatedAt;
}

/** A fact accepted in Postgres (installs, ledger_events) that ClickHouse has not confirmed yet. */
export interface FactOutboxTable {
  kind: 'installs' | 'ledger';
  id: string;
  recorded_at: Date;
}

export interface PortalSessionsTable {
  id: string;
  token_hash: string;
  user_id: string;
  brand_id: string;
  created_at: CreatedAt;
  expires_at: Date;
  revoked_at: Date | null;
}

export interface BillingConnectionsTable {
  id: string;
  brand_id: string;
  provider: string;
  /** SHA-256 of the svw_ inbound token: the webhook route looks connections up by it. */
  token_hash: string;
  /** The token itself, sealed (src/attribution/webhooks/secret-box.ts), to show the webhook URL again. */
  token_encrypted: string;
  signing_secret_encrypted: string | null;
  sandbox_secret_encrypted: string | null;
  settings: ColumnType<Record<string, unknown>, string | undefined, string>;
  status: ColumnType<'awaiting_first_event' | 'connected' | 'error', 'awaiting_first_event' | undefined, 'connected' | 'error'>;
  last_error: string | null;
  last_event_at: Date | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface BillingReferencesTable {
  brand_id: string;
  reference: string;
  transaction_id: string;
  created_at: CreatedAt;
}

/** A brand's app identifiers for the association files (migrations/0017); null columns: platform not set. */
export interface BrandAppsTable {
  brand_id: string;
  ios_team_id: string | null;
  ios_bundle_id: string | null;
  android_package: string | null;
  android_fingerprints: string[] | null;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** A link an installed app was opened with (POST /opens, migrations/0017). */
export interface LinkOpensTable {
  id: Generated<number>;
  brand_id: string;
  install_id: string;
  platform: string;
  link_id: number;
  click_token: string;
  opened_at: ColumnType<Date, Date | string | undefined, never>;
}

export interface Database {
  brands: BrandsTable;
  api_keys: ApiKeysTable;
  portal_users: PortalUsersTable;
  creators: CreatorsTable;
  campaigns: CampaignsTable;
  domains: DomainsTable;
  links: LinksTable;
  creator_codes: CreatorCodesTable;
  installs: InstallsTable;
  ledger_events: LedgerEventsTable;
  fact_outbox: FactOutboxTable;
  portal_sessions: PortalSessionsTable;
  billing_connections: BillingConnectionsTable;
  billing_references: BillingReferencesTable;
  brand_apps: BrandAppsTable;
  link_opens: LinkOpensTable;
}
