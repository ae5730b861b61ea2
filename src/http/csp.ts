/**
 * A Content-Security-Policy for pages served from this origin alone: scripts, styles, images
 * (and `data:` ones), fetches and fonts from here, nothing inline, never framed.
 */
export function sameOriginCsp({ forms }: { forms: 'self' | 'none' }): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "base-uri 'none'",
    `form-action '${forms}'`,
    "frame-ancestors 'none'",
  ].join('; ');
}
