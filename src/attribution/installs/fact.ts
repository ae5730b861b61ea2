import type { Selectable } from 'kysely';
import type { InstallsTable } from '../../db/schema';
import { chDateTime } from '../../warehouse/values';

export type InstallRow = Selectable<InstallsTable>;

/** The ClickHouse `installs` row of an accepted install; its id is the Postgres row id. */
export function installFact(row: InstallRow) {
  return {
    brand_id: row.brand_id,
    id: row.id,
    install_id: row.install_id,
    platform: row.platform,
    attributed: row.attributed ? 1 : 0,
    resolution_method: row.resolution_method,
    confidence: row.confidence,
    link_id: row.link_id,
    code_id: row.code_id,
    code_label: row.code_label,
    creator_id: row.creator_id,
    app_version: row.app_version,
    occurred_at: chDateTime(row.occurred_at),
    recorded_at: chDateTime(row.recorded_at),
  };
}

export type InstallFact = ReturnType<typeof installFact>;
