import type { FastifyInstance } from 'fastify';

/**
 * The demo's pictures (brand logos, placement thumbnails), drawn here as SVG so the demo needs no
 * outside host: offline, the smart install page and the portal show no broken image (README, "Demo data").
 */
export const DEMO_IMAGES_PATH = '/demo/images';

/** A logo's URL: the initials on a square of the hue. */
export const demoLogoUrl = (publicBaseUrl: string, initials: string, hue: number) =>
  `${publicBaseUrl}${DEMO_IMAGES_PATH}/logo.svg?text=${encodeURIComponent(initials)}&hue=${hue}`;

/** A thumbnail's URL: a portrait card of the hue with a number. */
export const demoThumbnailUrl = (publicBaseUrl: string, label: string, hue: number) =>
  `${publicBaseUrl}${DEMO_IMAGES_PATH}/thumbnail.svg?text=${encodeURIComponent(label)}&hue=${hue}`;

// Only short plain text reaches the SVG: letters, digits, spaces and dashes.
const TEXT = /^[\p{L}\p{N} -]{0,12}$/u;

function params(query: unknown): { text: string; hue: number } | null {
  const { text = '', hue = '0' } = (query ?? {}) as Record<string, unknown>;
  if (typeof text !== 'string' || typeof hue !== 'string' || !TEXT.test(text) || !/^\d{1,3}$/.test(hue) || Number(hue) > 359) return null;
  return { text, hue: Number(hue) };
}

const escapeXml = (s: string) => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

function logo(text: string, hue: number): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="128" height="128" viewBox="0 0 128 128" role="img"><rect width="128" height="128" rx="28" fill="hsl(${hue} 55% 42%)"/><text x="64" y="80" font-family="system-ui, sans-serif" font-size="48" font-weight="700" fill="#fff" text-anchor="middle">${escapeXml(text)}</text></svg>`;
}

function thumbnail(text: string, hue: number): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="320" height="568" viewBox="0 0 320 568" role="img"><defs><linearGradient id="g" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="hsl(${hue} 60% 62%)"/><stop offset="1" stop-color="hsl(${(hue + 40) % 360} 55% 32%)"/></linearGradient></defs><rect width="320" height="568" fill="url(#g)"/><circle cx="160" cy="250" r="46" fill="rgba(255,255,255,.85)"/><path d="M146 226v48l40-24z" fill="hsl(${hue} 55% 38%)"/><text x="160" y="520" font-family="system-ui, sans-serif" font-size="32" font-weight="700" fill="#fff" text-anchor="middle">${escapeXml(text)}</text></svg>`;
}

/** GET /demo/images/logo.svg and /demo/images/thumbnail.svg, `?text=` (up to 12 letters, digits, spaces) and `&hue=` (0-359). */
export async function demoImageRoutes(app: FastifyInstance): Promise<void> {
  for (const [name, draw] of [
    ['logo', logo],
    ['thumbnail', thumbnail],
  ] as const) {
    app.get(`${DEMO_IMAGES_PATH}/${name}.svg`, async (req, reply) => {
      const p = params(req.query);
      if (!p) return reply.code(404).send({ error: 'not_found' });
      return reply
        .type('image/svg+xml; charset=utf-8')
        .header('cache-control', 'public, max-age=86400')
        // An SVG opened on its own is a document: it may run nothing and load nothing.
        .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
        .header('x-content-type-options', 'nosniff')
        .header('cross-origin-resource-policy', 'cross-origin')
        .send(draw(p.text, p.hue));
    });
  }
}
