/**
 * A link's address. A name under localhost is the visitor's own machine, where the service answers
 * on plain http at the port the portal is served from (its public address); other domains use https.
 * No DOM here: the page passes its `location`, and tests call it in Node.
 */
export function linkUrl(l: { domain: string; slug: string }, portal: { port: string }): string {
  const local = l.domain === 'localhost' || l.domain.endsWith('.localhost');
  return local ? `http://${l.domain}${portal.port ? `:${portal.port}` : ''}/${l.slug}` : `https://${l.domain}/${l.slug}`;
}
