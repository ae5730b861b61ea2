/**
 * Attribution data for a demo brand, through the same endpoints as real traffic: a vanity
 * domain, a web link and a code per creator, clicks from the redirect app, app installs
 * and purchases from the pixel (some refunded), so the portal shows numbers at once.
 */
type Post = <T>(url: string, payload: unknown) => Promise<T>;
type Random = { next(): number; int(min: number, max: number): number; pick<T>(items: readonly T[]): T };

const USER_AGENTS = [
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/124.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 Version/17.4 Safari/605.1.15',
];
const SOURCES = ['tiktok', 'instagram', 'youtube'];

export async function seedAttribution(
  post: Post,
  brand: { id: string; pixel_key: string },
  creators: { id: string }[],
  rnd: Random,
  now: Date,
): Promise<void> {
  const hostname = `go-${brand.id.slice(0, 8)}.demo.test`;
  const domain = await post<{ id: string }>('/api/internal/attribution-domains', { hostname, brand_id: brand.id });
  const clickTokens: string[] = [];
  for (const [i, creator] of creators.slice(0, 4).entries()) {
    const slug = `c${i + 1}`;
    await post('/api/internal/attribution-links', {
      brand_id: brand.id,
      creator_id: creator.id,
      domain_id: domain.id,
      slug,
      type: 'web',
      destination_url: 'https://shop.example.com/landing',
    });
    await post('/api/internal/attribution-codes', { brand_id: brand.id, creator_id: creator.id });
    for (let c = rnd.int(20, 60); c > 0; c--) {
      const click = await post<{ click_token: string }>('/api/public/attribution/clicks', {
        domain: hostname,
        slug,
        query: `utm_source=${rnd.pick(SOURCES)}&utm_medium=creator`,
        user_agent: rnd.pick(USER_AGENTS),
        country: rnd.pick(['US', 'GB', 'CA', 'DE']),
      });
      clickTokens.push(click.click_token);
    }
  }
  const day = (n: number) => new Date(now.getTime() - n * 86_400_000 - rnd.int(0, 86_000_000)).toISOString();
  for (let i = 0; i < 6; i++) {
    await post('/api/public/attribution/installs', {
      pixel_key: brand.pixel_key,
      install_id: `demo-install-${brand.id.slice(0, 8)}-${i}`,
      platform: rnd.pick(['ios', 'android']),
      clipboard_token: i % 2 === 0 ? rnd.pick(clickTokens) : undefined,
      occurred_at: day(rnd.int(0, 20)),
    });
  }
  for (let i = 0; i < Math.min(30, clickTokens.length); i++) {
    const transaction = `demo-order-${brand.id.slice(0, 8)}-${i}`;
    const purchase = { pixel_key: brand.pixel_key, transaction_id: transaction, click_token: rnd.pick(clickTokens) };
    await post('/api/public/attribution/events', {
      ...purchase,
      amount: rnd.pick([19.99, 29, 49.5, 89]),
      currency: rnd.next() < 0.8 ? 'USD' : 'EUR',
      occurred_at: day(rnd.int(0, 45)),
    });
    if (i % 10 === 9) await post('/api/public/attribution/events', { ...purchase, event_type: 'refund', amount: 19.99 });
  }
}
