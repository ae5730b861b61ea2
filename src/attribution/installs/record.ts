import type { Db } from '../../db/database';
import type { Logger } from '../../logger';
import type { Queues } from '../../facts';
import { newId } from '../../secrets';
import { columnList } from '../../db/recordset';
import { AcceptedRows, queueOutboxFact } from '../../queues/outbox/accept';
import { type Credit, type CreditSources, codeCredit, countCodeCredits, creditColumns, linkCredit, UNATTRIBUTED } from '../ledger/credit';
import { type InstallRow, installFact } from './fact';
import type { RecentAppClicks } from './ip-clicks';
import { deepLinkOf } from '../links/queries';

const MAX_INSTALL_ID = 128;

/** An install id as installs are kept: stripped and cut to 128 characters; '' when blank. */
export const keptInstallId = (text: string): string => text.trim().slice(0, MAX_INSTALL_ID);

/** A validated install report (POST /installs). */
export type InstallReport = {
  installId: string;
  platform: 'ios' | 'android';
  clipboardToken: string | null;
  code: string | null;
  appVersion: string | null;
  occurredAt: Date;
  /** Keyed hash of the reporting device's IP, for the IP match; computed only when that match is tried. */
  ipHash: () => string;
};

/** The `install` object of the answer (docs/api.md#attribution-api). */
export type InstallAnswer = {
  install_id: string;
  platform: string;
  attributed: boolean;
  resolution_method: string;
  confidence: number;
  link: { id: number; domain: string; slug: string } | null;
  code: string | null;
  creator: { id: string; name: string } | null;
  /** The credited link's deep link as it was when the install was recorded; null without a link (docs/api.md). */
  deep_link: string | null;
};

export type InstallOutcome = { duplicate: boolean; install: InstallAnswer };

/** An install as inserted: every column but those Postgres fills. */
type NewInstall = Omit<InstallRow, 'recorded_at'>;

/** The columns a new install is inserted with. */
const INSTALL_COLUMNS = columnList({
  id: true,
  brand_id: true,
  install_id: true,
  platform: true,
  attributed: true,
  resolution_method: true,
  confidence: true,
  link_id: true,
  code_id: true,
  code_label: true,
  creator_id: true,
  app_version: true,
  occurred_at: true,
  deep_link: true,
} satisfies Record<keyof NewInstall, true>);

type Deps = { db: Db; queues: Queues; log: Logger; credit: CreditSources; recentAppClicks: RecentAppClicks };

/**
 * Records installs: attribute, then accept once per (brand, install_id) (AcceptedRows:
 * the insert decides `duplicate` and makes the fact pending in the outbox), then queue
 * the ClickHouse fact.
 */
export class InstallRecorder {
  private readonly accepted: AcceptedRows<NewInstall, { recorded_at: Date }>;

  constructor(private readonly deps: Deps) {
    this.accepted = new AcceptedRows(deps.db, {
      table: 'installs',
      kind: 'installs',
      columns: INSTALL_COLUMNS,
      key: ['brand_id', 'install_id'],
      returning: [],
      alongside: { reads: ['code_id'], cte: countCodeCredits() },
    });
  }

  async record(brandId: string, report: InstallReport): Promise<InstallOutcome> {
    const credit = await this.attribute(brandId, report);
    const draft: NewInstall = {
      id: newId(),
      brand_id: brandId,
      install_id: report.installId,
      platform: report.platform,
      attributed: credit.method !== 'unattributed',
      ...creditColumns(credit),
      app_version: report.appVersion,
      occurred_at: report.occurredAt,
      // Read now, not memoised: a link's deep link may change, and the install keeps the one it was answered.
      deep_link: credit.link ? await deepLinkOf(this.deps.db, credit.link.id) : null,
    };
    const recorded = await this.accepted.insert(draft);
    if (!recorded) return { duplicate: true, install: await this.recorded(brandId, report.installId) };
    const row: InstallRow = { ...draft, ...recorded };
    queueOutboxFact(this.deps.queues, this.deps.log, 'installs', installFact(row));
    return {
      duplicate: false,
      install: {
        install_id: row.install_id,
        platform: row.platform,
        attributed: row.attributed,
        resolution_method: credit.method,
        confidence: credit.confidence,
        link: credit.link && { id: credit.link.id, domain: credit.link.domain, slug: credit.link.slug },
        code: credit.code?.label ?? null,
        creator: credit.creator,
        deep_link: row.deep_link,
      },
    };
  }

  /** First match wins: clipboard token of this brand's link, over creator code, over IP match, over nothing. */
  private async attribute(brandId: string, report: InstallReport): Promise<Credit> {
    const { credit, recentAppClicks } = this.deps;
    const clipboardLink = await credit.clickToken(brandId, report.clipboardToken);
    if (clipboardLink) return linkCredit('clipboard', clipboardLink);
    const code = await credit.code(brandId, report.code);
    if (code) return codeCredit(code);
    const clickedLinkId = await recentAppClicks.linkFor(brandId, report.ipHash(), report.platform, report.occurredAt);
    const clickedLink = clickedLinkId === null ? null : await credit.links.byId(clickedLinkId);
    if (clickedLink?.brandId === brandId) return linkCredit('ip', clickedLink);
    return UNATTRIBUTED;
  }

  /** The install as first recorded, answered to a retry. */
  private async recorded(brandId: string, installId: string): Promise<InstallAnswer> {
    const row = await this.deps.db
      .selectFrom('installs as i')
      .leftJoin('creators as c', 'c.id', 'i.creator_id')
      .select([
        'i.install_id',
        'i.platform',
        'i.attributed',
        'i.resolution_method',
        'i.confidence',
        'i.link_id',
        'i.code_label',
        'i.creator_id',
        'c.name as creator_name',
        'i.deep_link',
      ])
      .where('i.brand_id', '=', brandId)
      .where('i.install_id', '=', installId)
      .executeTakeFirstOrThrow();
    // The link's address from the link directory (memoised), as the first answer named it.
    const link = row.link_id === null ? null : await this.deps.credit.links.byId(row.link_id);
    return {
      install_id: row.install_id,
      platform: row.platform,
      attributed: row.attributed,
      resolution_method: row.resolution_method,
      confidence: row.confidence ?? 0,
      link: row.link_id !== null ? { id: row.link_id, domain: link?.domain ?? '', slug: link?.slug ?? '' } : null,
      code: row.code_label,
      creator: row.creator_id !== null ? { id: row.creator_id, name: row.creator_name ?? '' } : null,
      deep_link: row.deep_link,
    };
  }
}
