import { sql } from 'kysely';
import type { Db } from '../../db/database';
import { CLICK_TOKEN_PREFIX, clickTokenLinkId } from '../links/click-token';
import { type CreditedLink, LinkDirectory } from '../links/resolve';
import type { ResolutionMethod } from './types';

/**
 * Who an install or a ledger row is credited to, and how sure (docs/api.md#attribution-api): a click token 1, the
 * clipboard 0.95 (it can hold an older token), a typed code 0.9, an IP match 0.6, report-only
 * (payouts take 0.9 and above).
 */
export type Credit = {
  method: ResolutionMethod;
  confidence: number;
  link: CreditedLink | null;
  code: CreditedCode | null;
  creator: { id: string; name: string } | null;
};

export type CreditedCode = { id: string; label: string; creator: { id: string; name: string } };

export const CONFIDENCE: Record<ResolutionMethod, number> = {
  click: 1,
  clipboard: 0.95,
  code: 0.9,
  ip: 0.6,
  unattributed: 0,
};

export const UNATTRIBUTED: Credit = { method: 'unattributed', confidence: 0, link: null, code: null, creator: null };

export function linkCredit(method: 'click' | 'clipboard' | 'ip', link: CreditedLink): Credit {
  return { method, confidence: CONFIDENCE[method], link, code: null, creator: link.creator };
}

export function codeCredit(code: CreditedCode): Credit {
  return { method: 'code', confidence: CONFIDENCE.code, link: null, code, creator: code.creator };
}

/** The attribution columns installs and ledger rows keep of a credit. */
export type CreditColumns = {
  resolution_method: ResolutionMethod;
  confidence: number;
  link_id: number | null;
  creator_id: string | null;
  code_id: string | null;
  code_label: string | null;
};

export function creditColumns(credit: Credit): CreditColumns {
  return {
    resolution_method: credit.method,
    confidence: credit.confidence,
    link_id: credit.link?.id ?? null,
    creator_id: credit.creator?.id ?? null,
    code_id: credit.code?.id ?? null,
    code_label: credit.code?.label ?? null,
  };
}

/** The things a brand can be credited through: its links' click tokens and its active creator codes. */
export class CreditSources {
  readonly links: LinkDirectory;

  constructor(
    private readonly db: Db,
    private readonly secretKey: string,
  ) {
    this.links = new LinkDirectory(db);
  }

  /** The link behind a click token, only when the token verifies and the link is this brand's. */
  async clickToken(brandId: string, token: string | null | undefined): Promise<CreditedLink | null> {
    if (!token?.startsWith(CLICK_TOKEN_PREFIX)) return null;
    const linkId = clickTokenLinkId(this.secretKey, token.trim());
    if (linkId === null) return null;
    const link = await this.links.byId(linkId);
    return link?.brandId === brandId ? link : null;
  }

  /** The brand's active creator code with this label, compared case-insensitively. */
  async code(brandId: string, label: string | null | undefined): Promise<CreditedCode | null> {
    const wanted = label?.trim().toUpperCase();
    if (!wanted) return null;
    const row = await this.db
      .selectFrom('creator_codes as k')
      .innerJoin('creators as c', 'c.id', 'k.creator_id')
      .select(['k.id', 'k.label', 'c.id as creator_id', 'c.name as creator_name'])
      .where('k.brand_id', '=', brandId)
      .where((eb) => eb(eb.fn('upper', ['k.label']), '=', wanted))
      .where('k.active', '=', true)
      .executeTakeFirst();
    return row ? { id: row.id, label: row.label, creator: { id: row.creator_id, name: row.creator_name } } : null;
  }
}

/**
 * Body of a CTE that counts credits: after an INSERT … RETURNING named `recorded`, adds
 * each code's newly recorded rows to its `credited_count`, in the same statement as the
 * insert, so the count moves exactly when rows are recorded (and never for duplicates).
 */
export const countCodeCredits = () => sql<{ id: string }>`(
  UPDATE creator_codes c SET credited_count = c.credited_count + n.rows
  FROM (SELECT code_id, count(*) AS rows FROM recorded WHERE code_id IS NOT NULL GROUP BY code_id) n
  WHERE c.id = n.code_id
  RETURNING c.id)`;
