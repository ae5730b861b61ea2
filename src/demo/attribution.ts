import type { ClickRecorder } from '../attribution/clicks/record';

/**
 * Attribution data for a demo brand over the last 90 days: an operator domain under `localhost`, a
 * web link and a code per creator and one app link, clicks through the click path of POST /clicks, installs and purchases (some
 * refunded) through the pixel's endpoints, so the portal's chart shows a believable curve.
 */
type Post = <T>(url: string, payload: unknown) => Promise<T>;
type Random = { next(): number; int(min: number, max: number): number; pick<T>(items: readonly T[]): T };
type Click = { token: string; at: number };

const DAYS = 90;
const DAY_MS = 86_400_000;
const USER_AGENTS = [
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/124.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 Version/17.4 Safari/605.1.15',
];
const SOURCES = ['tiktok', 'instagram', 'youtube'];

/**
 * A link's clicks on the day `daysAgo`: the brand grew over the period (recent days busiest),
 * weekends bring more clicks, and each post of the creator's (`posts`, days ago) draws a burst that fades in a few days.
 */
function clicksOn(daysAgo: number, dayStart: number, posts: number[], rnd: Random): number {
  const growth = 0.25 + 0.75 * (1 - daysAgo / DAYS);
  const weekday = new Date(dayStart).getUTCDay();
  const weekend = weekday === 0 || weekday === 6 ? 1.4 : 1;
  const bursts = posts.filter((p) => p >= daysAgo).reduce((sum, p) => sum + 4 * Math.exp(-(p - daysAgo) / 1.5), 0);
  return Math.round(2.5 * growth * weekend * (1 + bursts) * (0.6 + 0.8 * rnd.next()));
}

/** The demo brand's links: on an operator domain under `localhost`, which browsers send to this machine. */
export type DemoLinks = { hostname: string; web: string; app: string };

/**
 * The demo domain's name, from the brand's id (a second seed-demo gets its own): `go-<8 hex>.localhost`.
 * Every name under `localhost` resolves to the visitor's own machine, so the link host answers it locally.
 */
export const demoHostname = (brandId: string) => `go-${brandId.replace(/[^a-z0-9]/gi, '').slice(0, 8).toLowerCase()}.localhost`;

export async function seedAttribution(
  post: Post,
  clicks: ClickRecorder,
  brand: { id: string; pixel_key: string; name: string },
  creators: { id: string }[],
  rnd: Random,
  now: Date,
): Promise<DemoLinks> {
  const hostname = demoHostname(brand.id);
  // Registered by the operator (the internal API): trusted, served at once.
  const domain = await post<{ id: string }>('/api/internal/attribution-domains', { hostname, brand_id: brand.id });
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  // Never after `now`: the pixel refuses events from the future.
  const before = (ms: number) => Math.min(ms, now.getTime() - 1000);
  const made: Click[] = [];
  const codes: string[] = [];
  const app = brand.name.toLowerCase().replace(/[^a-z0-9]+/g, '');
  const links: { creator: { id: string }; slug: string; type: 'web' | 'app'; share: number }[] = creators
    .slice(0, 4)
    .map((creator, i) => ({ creator, slug: `c${i + 1}`, type: 'web', share: 1 }));
  // One app link: its visitors get the smart install page with both stores.
  if (creators[0]) links.push({ creator: creators[0], slug: 'app', type: 'app', share: 0.5 });
  for (const { creator, slug, type, share } of links) {
    await post('/api/internal/attribution-links', {
      brand_id: brand.id,
      creator_id: creator.id,
      domain_id: domain.id,
      slug,
      type,
      destination_url: type === 'web' ? 'https://shop.example.com/landing' : 'https://shop.example.com/app',
      ...(type === 'app'
        ? { ios_url: 'https://apps.apple.com/app/id6450000001', android_url: `https://play.google.com/store/apps/details?id=com.example.${app || 'demo'}` }
        : {}),
    });
    if (type === 'web') codes.push((await post<{ label: string }>('/api/internal/attribution-codes', { brand_id: brand.id, creator_id: creator.id })).label);
    const link = await clicks.link(hostname, slug);
    if (!link) throw new Error(`the demo link ${hostname}/${slug} is not served`);
    const posts = Array.from({ length: rnd.int(3, 7) }, () => rnd.int(0, DAYS - 1));
    for (let daysAgo = DAYS - 1; daysAgo >= 0; daysAgo--) {
      const dayStart = today - daysAgo * DAY_MS;
      // Today so far only.
      const span = Math.min(DAY_MS, now.getTime() - dayStart);
      const count = Math.round((share * clicksOn(daysAgo, dayStart, posts, rnd) * span) / DAY_MS);
      const times = Array.from({ length: count }, () => dayStart + rnd.next() * span);
      const visit = () => ({
        query: `utm_source=${rnd.pick(SOURCES)}&utm_medium=creator`,
        userAgent: rnd.pick(USER_AGENTS),
        country: rnd.pick(['US', 'GB', 'CA', 'DE']),
        bot: false,
      });
      const answers = await Promise.all(times.map((at) => clicks.record(link, visit(), new Date(at))));
      made.push(...answers.map((a, n) => ({ token: a.click_token, at: times[n]! })));
    }
  }

  // Some visitors install the app within hours of their click (half of them carry the token on the clipboard).
  const iso = (ms: number) => new Date(before(ms)).toISOString();
  for (const [i, click] of made.filter(() => rnd.next() < 0.06).entries()) {
    await post('/api/public/attribution/installs', {
      pixel_key: brand.pixel_key,
      install_id: `demo-install-${brand.id.slice(0, 8)}-${i}`,
      platform: rnd.pick(['ios', 'android']),
      clipboard_token: i % 2 === 0 ? click.token : undefined,
      occurred_at: iso(click.at + rnd.int(5, 180) * 60_000),
    });
  }
  // Some buy within two days, by the click's token or a creator's code; one in twelve refunds within a week.
  for (const [i, click] of made.filter(() => rnd.next() < 0.05).entries()) {
    const at = click.at + rnd.int(10, 2880) * 60_000;
    const purchase = {
      pixel_key: brand.pixel_key,
      transaction_id: `demo-order-${brand.id.slice(0, 8)}-${i}`,
      ...(rnd.next() < 0.8 ? { click_token: click.token } : { code: rnd.pick(codes) }),
      amount: rnd.pick([19.99, 29, 49.5, 89]),
      currency: rnd.next() < 0.8 ? 'USD' : 'EUR',
    };
    await post('/api/public/attribution/events', { ...purchase, occurred_at: iso(at) });
    if (i % 12 === 11) await post('/api/public/attribution/events', { ...purchase, event_type: 'refund', occurred_at: iso(at + rnd.int(1, 7) * DAY_MS) });
  }
  return { hostname, web: 'c1', app: 'app' };
}
