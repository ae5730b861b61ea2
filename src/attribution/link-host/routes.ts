import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/database';
import { associationFileOn } from '../apps/apps';
import type { Logger } from '../../logger';
import { countAsRoute, LINK_HOST_ROUTE } from '../../metrics';
import { RepeatedLog } from '../../repeated-log';
import { isBotVisit } from '../clicks/bots';
import type { ClickAnswer, ClickRecorder, Visit } from '../clicks/record';
import type { ServedLink } from '../links/resolve';
import type { AttributionHosts } from './hosts';
import { messagePage, type Page, smartInstallPage } from './pages';

export type LinkHostDeps = {
  hosts: AttributionHosts;
  clicks: ClickRecorder;
  /** Reads the brand's app identifiers for the association files. */
  db: Db;
  log: Logger;
  /** Whether a visit from this client address may be recorded (the per-IP limit); visits over it are still served. */
  mayRecord(ip: string): Promise<boolean>;
};

/** The slug's length POST /clicks reads (its `slug` field is cut there): a longer path is that slug, no link's, so the root link's. */
const MAX_SLUG = 2048;

const UNAVAILABLE = () => messagePage('Temporarily unavailable', 'This link cannot be opened right now. Please try again in a minute.');
const NOT_ACTIVE = () => messagePage('This link is not active', 'The link you followed does not lead anywhere right now. Check it with whoever shared it.');

/**
 * The link host (docs/link-host.md): a request whose Host is an attribution domain is a visit, whatever
 * its path, recorded through the same ClickRecorder as POST /clicks and answered with a redirect or
 * the smart install page, never JSON; other hosts go on to the API.
 */
export function linkHostRoutes(app: FastifyInstance, deps: LinkHostDeps): void {
  const unqueued = new RepeatedLog(deps.log, 'warn', 'could not queue link-host clicks; visitors are served without a click token');
  app.addHook('onRequest', async (req, reply) => {
    const domain = await deps.hosts.match(visitedHost(req));
    if (domain) {
      countAsRoute(req, LINK_HOST_ROUTE);
      await serveVisit(req, reply, domain, { ...deps, unqueued });
      return reply;
    }
    // No domain list yet (Postgres down since the start): a request no API route takes may be a visit.
    if (deps.hosts.unreadable && !req.routeOptions.url) {
      countAsRoute(req, LINK_HOST_ROUTE);
      sendPage(reply.header('cache-control', 'no-store'), 503, UNAVAILABLE());
      return reply;
    }
  });
  app.addHook('onClose', async () => unqueued.flush());
}

type VisitDeps = LinkHostDeps & { unqueued: RepeatedLog };

/**
 * Fastify's `frameworkErrors`: a URL it cannot route (a percent-encoding that is not UTF-8, such
 * as an encoded lone surrogate) names nothing: a 404 page on an attribution domain, and the API's
 * 404 `not_found` on any other host (text no store can hold in a path is a 404).
 */
export function unroutableUrl(hosts: AttributionHosts) {
  return async (_err: FastifyError, req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (await hosts.match(visitedHost(req))) {
      countAsRoute(req, LINK_HOST_ROUTE);
      sendPage(reply.header('cache-control', 'no-store'), 404, NOT_ACTIVE());
      return;
    }
    reply.code(404).send({ error: 'not_found' });
  };
}

async function serveVisit(req: FastifyRequest, reply: FastifyReply, domain: string, deps: VisitDeps): Promise<void> {
  reply.header('cache-control', 'no-store');
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    sendPage(reply.header('allow', 'GET, HEAD'), 405, messagePage('Method not allowed', 'Creator links open with a plain visit (GET).'));
    return;
  }
  const target = visitTarget(req.url);
  if (target === 'reserved' && (await serveAssociationFile(req, reply, domain, deps))) return;
  if (target === 'robots') {
    // Crawlers have nothing to index on a link domain; previews fetch regardless, and are told apart as bots.
    reply.code(200).type('text/plain; charset=utf-8').send('User-agent: *\nDisallow: /\n');
    return;
  }
  if (target === 'reserved' || target === null) {
    sendPage(reply, 404, NOT_ACTIVE());
    return;
  }

  let link: ServedLink | null;
  try {
    link = await deps.clicks.link(domain, target.slug);
  } catch (err) {
    deps.log.error({ err }, 'could not resolve a link for the link host');
    sendPage(reply, 503, UNAVAILABLE());
    return;
  }
  if (!link) {
    sendPage(reply, 404, NOT_ACTIVE());
    return;
  }

  const header = (name: string) => {
    const value = req.headers[name];
    return typeof value === 'string' ? value : undefined;
  };
  const userAgent = header('user-agent');
  const visit: Visit = {
    query: target.query,
    referrer: header('referer'),
    userAgent,
    country: header('cf-ipcountry') ?? header('x-country'),
    ip: req.ip,
    bot: isBotVisit(userAgent, header('sec-purpose') ?? header('purpose')),
  };
  const answer = await answerVisit(req, link, visit, deps);

  if (answer.app) {
    sendPage(reply, 200, smartInstallPage({ ...answer, app: answer.app }, link.brandLogoUrl));
    return;
  }
  // Its length set here, a HEAD carries it as GET does (Fastify adds it only for a body it sends).
  reply.code(302).header('location', answer.redirect_url).header('content-length', '0').send();
}

/**
 * An app association file (docs/link-host.md): 200 JSON, no redirect, when the domain belongs to one
 * brand that set that platform's app; false otherwise (the caller answers its 404 page).
 */
async function serveAssociationFile(req: FastifyRequest, reply: FastifyReply, domain: string, deps: VisitDeps): Promise<boolean> {
  const path = req.url.replace(ABSOLUTE_FORM, '').split('?')[0]!;
  let file: unknown | null;
  try {
    file = await associationFileOn(deps.db, domain, path);
  } catch (err) {
    deps.log.error({ err }, 'could not read the app association file for the link host');
    sendPage(reply, 503, UNAVAILABLE());
    return true;
  }
  if (file === null) return false;
  // As bytes: Fastify would add `; charset=utf-8` to a text answer, and the files are served as plain application/json.
  const body = Buffer.from(JSON.stringify(file));
  reply.code(200).header('content-type', 'application/json').header('content-length', String(body.length)).send(body);
  return true;
}

/** Records a GET within the limits; a HEAD, a visit over a limit or one Redis cannot take is served without a click token. */
async function answerVisit(req: FastifyRequest, link: ServedLink, visit: Visit, deps: VisitDeps): Promise<ClickAnswer> {
  if (req.method !== 'GET' || !(await deps.mayRecord(req.ip))) return deps.clicks.unrecorded(link, visit);
  try {
    return await deps.clicks.record(link, visit);
  } catch (err) {
    deps.unqueued.report({ err });
    return deps.clicks.unrecorded(link, visit);
  }
}

type Target = { slug: string; query: string } | 'robots' | 'reserved' | null;

/** A request target in absolute form (`GET http://maya.link/spring`, as sent to a proxy): scheme and authority. */
const ABSOLUTE_FORM = /^[a-z][a-z\d+.-]*:\/\/(?:[^/?#@]*@)?([^/?#]*)/i;

/** The host a request visits: the absolute form's authority, which HTTP/1.1 puts before Host (RFC 9112 3.2.2), else Host. */
function visitedHost(req: FastifyRequest): string {
  return ABSOLUTE_FORM.exec(req.url)?.[1] ?? req.host;
}

/** The slug and raw query of a request URL (Node's header limit bounds its length); null for a path no link can have (malformed, NUL). */
function visitTarget(requestTarget: string): Target {
  // HTTP/1.1 servers must take the absolute form too: its path is the slug.
  const url = requestTarget.replace(ABSOLUTE_FORM, '');
  const q = url.indexOf('?');
  const rawPath = q < 0 ? url : url.slice(0, q);
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    return null;
  }
  if (path.includes('\0')) return null;
  if (path === '/robots.txt') return 'robots';
  if (path === '/favicon.ico' || path.startsWith('/.well-known/')) return 'reserved';
  return { slug: path.slice(1, 1 + MAX_SLUG), query: q < 0 ? '' : url.slice(q + 1) };
}

function sendPage(reply: FastifyReply, status: number, page: Page): void {
  reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('content-security-policy', page.csp)
    .header('x-content-type-options', 'nosniff')
    .send(page.html);
}
