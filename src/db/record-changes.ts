import type { Logger } from '../logger';
import { BrandChanges } from './brand-changes';

/**
 * Changes to the records cached answers name (brands, campaigns, creators, links, domains, codes):
 * every statement notifies `records <brand ids>`, or `records *` for shared ones (migrations/0011);
 * and to portal sessions, which notify `sessions *` (migrations/0012).
 */
export type RecordChanges = BrandChanges<'records' | 'sessions'>;

export function recordChanges(databaseUrl: string, log: Logger): RecordChanges {
  return new BrandChanges(databaseUrl, 'record_changes', ['records', 'sessions'], log);
}
