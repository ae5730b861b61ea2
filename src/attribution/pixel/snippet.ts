/**
 * The pixel's interface version, which snippets pasted into brands' sites keep forever:
 * v1 keeps working when ./pixel.js changes.
 */
export const PIXEL_VERSION = '1';

/** The URL a snippet loads the pixel from. */
export function pixelUrl(publicBaseUrl: string): string {
  return `${publicBaseUrl}/pixel.js?v=${PIXEL_VERSION}`;
}

/**
 * The loader brands paste into every page (GET /api/client/attribution/setup): a stub that
 * queues calls until the pixel has loaded, the init call with the pixel key, and the pixel.
 */
export function pixelSnippet(publicBaseUrl: string, pixelKey: string): string {
  return [
    '<script>',
    '  window.svc = window.svc || function () { (svc.q = svc.q || []).push(arguments); };',
    `  svc('init', ${JSON.stringify(pixelKey)});`,
    '</script>',
    `<script async src="${pixelUrl(publicBaseUrl).replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"></script>`,
  ].join('\n');
}
