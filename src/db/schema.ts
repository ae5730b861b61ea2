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

export interface Database {
  brands: BrandsTable;
  api_keys: ApiKeysTable;
  portal_users: PortalUsersTable;
  creators: CreatorsTable;
  campaigns: CampaignsTable;
}
