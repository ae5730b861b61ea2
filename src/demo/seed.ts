import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { QUIET_REQUEST } from '../http/request-log';
import { PLATFORMS, type Platform } from '../platforms';
import { type DemoLinks, seedAttribution } from './attribution';
import { demoLogoUrl, demoThumbnailUrl } from './images.routes';

/**
 * A synthetic but plausible data set, loaded through the internal set-up endpoints so it takes
 * real data's path (validation, queues, workers, derived tables); what it holds: README, "Demo
 * data". Instagram reports no shares (null), as in real exports.
 */

export type DemoSize = { brands: number; creators: number; placements: number; days: number };
export type DemoBrand = { id: string; name: string; apiKey: string; pixelKey: string; portal: { email: string; password: string }; links: DemoLinks };

/** Where the seeded data points: the service's public address (its images) and when "now" is. */
export type SeedOptions = { publicBaseUrl: string; now?: Date };

/** The set-up endpoints take at most this many items per request (docs/api.md#internal-set-up-endpoints). */
const BATCH = 10_000;
const DAY_MS = 86_400_000;

const BRAND_NAMES = ['Northwind Coffee', 'Lumen Skincare', 'Trailhead Outdoor', 'Pixel Pets', 'Harbor Audio', 'Verde Kitchen'];
const FIRST_NAMES = ['Maya', 'Leo', 'Aisha', 'Noah', 'Priya', 'Mateo', 'Chloe', 'Kenji', 'Zoe', 'Omar', 'Lena', 'Sam'];
const LAST_NAMES = ['Lopez', 'Kim', 'Okafor', 'Rossi', 'Nguyen', 'Silva', 'Martin', 'Tanaka', 'Haddad', 'Berg'];
const CAPTIONS = [
  'Morning routine, but make it better ☕',
  'Unboxing the new drop — honest review',
  '3 ways I use this every day',
  'Tried it for 30 days: here is what happened',
  'POV: you finally found "the one"',
  'Link in bio, code inside, thank me later',
];

/** mulberry32: a small deterministic generator, so a data set can be reproduced. */
function generator(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
  };
}

type Creator = { id: string; platforms: Platform[] };
type Placement = { id: string; platform: Platform; postedAt: Date };

export async function seedDemo(app: FastifyInstance, adminToken: string, size: DemoSize, { publicBaseUrl, now = new Date() }: SeedOptions): Promise<DemoBrand[]> {
  const rnd = generator(size.brands * 7919 + size.creators * 104_729 + size.placements);
  const post = async <T>(url: string, payload: unknown): Promise<T> => {
    // Not request-logged: a start's banner would come after a line per set-up call.
    const headers = { authorization: `Bearer ${adminToken}`, [QUIET_REQUEST.header]: QUIET_REQUEST.token };
    const res = await app.inject({ method: 'POST', url, payload: payload as object, headers });
    if (res.statusCode >= 300) throw new Error(`POST ${url} answered ${res.statusCode}: ${res.body.slice(0, 500)}`);
    return res.json() as T;
  };

  const creators: Creator[] = [];
  for (let i = 0; i < size.creators; i++) {
    const first = rnd.pick(FIRST_NAMES);
    const name = `${first} ${rnd.pick(LAST_NAMES)}`;
    const platforms = PLATFORMS.filter(() => rnd.next() < 0.5);
    if (platforms.length === 0) platforms.push(rnd.pick(PLATFORMS));
    const slug = `${name.toLowerCase().replace(/\W+/g, '.')}${i}`;
    const handles = platforms.map((platform) => ({ platform, handle: platform === 'youtube' ? `${first}Creates${i}` : `@${slug}` }));
    // followers spread from a thousand to a few million; some creators never said
    const followers = rnd.next() < 0.1 ? null : Math.round(10 ** (3 + rnd.next() * 3.5));
    const created = await post<{ id: string }>('/api/internal/creators', { name, first_name: first, handles, followers });
    creators.push({ id: created.id, platforms });
  }

  const brands: DemoBrand[] = [];
  for (let b = 0; b < size.brands; b++) {
    const name = BRAND_NAMES[b % BRAND_NAMES.length]! + (b >= BRAND_NAMES.length ? ` ${Math.floor(b / BRAND_NAMES.length) + 1}` : '');
    const platforms = b === 0 ? [...PLATFORMS] : PLATFORMS.filter((_, i) => i < 2 || rnd.next() < 0.5);
    const initials = name
      .split(' ')
      .filter((w) => /^\p{L}/u.test(w))
      .map((w) => w[0]!.toUpperCase())
      .join('')
      .slice(0, 2);
    const brand = await post<{ id: string; pixel_key: string }>('/api/internal/brands', {
      name,
      logo_url: demoLogoUrl(publicBaseUrl, initials, (b * 67 + 200) % 360),
      default_platforms: platforms,
    });
    const { key } = await post<{ key: string }>(`/api/internal/brands/${brand.id}/api-keys`, { name: 'demo' });
    const portal = { email: `demo-${brand.id.slice(0, 8)}@example.com`, password: randomBytes(12).toString('base64url') };
    await post(`/api/internal/brands/${brand.id}/portal-users`, portal);

    const day = (daysAgo: number) => new Date(now.getTime() - daysAgo * DAY_MS).toISOString().slice(0, 10);
    const campaigns = [];
    for (const c of [
      { name: 'Launch', start_date: day(size.days), end_date: day(Math.floor(size.days / 2)), status: 'completed' },
      { name: 'Always-on', start_date: day(size.days) },
      { name: 'Holiday push', start_date: day(Math.floor(size.days / 3)) },
      { name: 'Internal test', visible: false },
    ]) {
      campaigns.push((await post<{ id: string }>('/api/internal/campaigns', { brand_id: brand.id, ...c })).id);
    }

    const placements: Placement[] = [];
    const placementRows = [];
    for (let i = 0; i < size.placements; i++) {
      const creator = rnd.next() < 0.9 ? rnd.pick(creators) : undefined;
      const usable = creator?.platforms.filter((p) => platforms.includes(p)) ?? [];
      const platform = rnd.pick(usable.length ? usable : platforms);
      const postedAt = new Date(now.getTime() - rnd.next() * size.days * DAY_MS);
      const id = `${brand.id.slice(0, 8)}-${String(i).padStart(6, '0')}`;
      placements.push({ id, platform, postedAt });
      placementRows.push({
        id,
        brand_id: brand.id,
        campaign_id: rnd.next() < 0.05 ? campaigns[3] : rnd.pick(campaigns.slice(0, 3)),
        creator_id: creator?.id ?? null,
        platform,
        url: `https://${platform}.com/p/${id}`,
        thumbnail_url: demoThumbnailUrl(publicBaseUrl, String(i + 1), rnd.int(0, 359)),
        caption: rnd.pick(CAPTIONS),
        posted_at: postedAt.toISOString(),
      });
    }
    for (let i = 0; i < placementRows.length; i += BATCH) {
      await post('/api/internal/placements', { placements: placementRows.slice(i, i + BATCH) });
    }

    let snapshots: ReturnType<typeof growthCurve> = [];
    for (const p of placements) {
      snapshots.push(...growthCurve(p, now, rnd));
      if (snapshots.length >= BATCH) {
        await post('/api/internal/placement-metrics', { snapshots: snapshots.slice(0, BATCH) });
        snapshots = snapshots.slice(BATCH);
      }
    }
    if (snapshots.length) await post('/api/internal/placement-metrics', { snapshots });
    const links = await seedAttribution(post, app.clicks, { ...brand, name }, creators, rnd, now);
    brands.push({ id: brand.id, name, apiKey: key, pixelKey: brand.pixel_key, portal, links });
  }
  return brands;
}

/**
 * Daily cumulative snapshots from the posting day to today: views approach a final count
 * with a placement-specific pace (most within a week or two), likes, comments and shares
 * follow at placement-specific rates.
 */
function growthCurve(p: Placement, now: Date, rnd: ReturnType<typeof generator>) {
  const finalViews = 10 ** (2.5 + rnd.next() * 3);
  const pace = 1 + rnd.next() * 9;
  const likeRate = 0.03 + rnd.next() * 0.06;
  const commentRate = 0.002 + rnd.next() * 0.008;
  const shareRate = p.platform === 'instagram' ? null : 0.001 + rnd.next() * 0.01;
  const first = Date.parse(p.postedAt.toISOString().slice(0, 10));
  const rows = [];
  for (let t = first, age = 1; t <= now.getTime(); t += DAY_MS, age++) {
    const views = Math.round(finalViews * (1 - Math.exp(-age / pace)));
    rows.push({
      placement_id: p.id,
      date: new Date(t).toISOString().slice(0, 10),
      views,
      likes: Math.round(views * likeRate),
      comments: Math.round(views * commentRate),
      shares: shareRate === null ? null : Math.round(views * shareRate),
    });
  }
  return rows;
}
