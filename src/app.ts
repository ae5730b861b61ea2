import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { ClickRecorder } from './attribution/clicks/record';
import { RecentAppClicks } from './attribution/installs/ip-clicks';
import { InstallRecorder } from './attribution/installs/record';
import { createLedger } from './attribution/ledger/record';
import { serviceHostname } from './attribution/domains/hostname';
import { AttributionHosts } from './attribution/link-host/hosts';
import { linkHostRoutes, unroutableUrl } from './attribution/link-host/routes';
import { LinkOpens, startOpensPurge } from './attribution/links/opens';
import { createWebhookServices } from './attribution/outbound-webhooks/service';
import { ClickLinks } from './attribution/links/resolve';
import { pixelRoutes } from './attribution/pixel/routes';
import { publicAttributionRoutes } from './attribution/public';
import { PixelKeys } from './attribution/public/pixel-keys';
import { webhookRoutes } from './attribution/webhooks/routes';
import { dataApiRoutes } from './data-api';
import { demoImageRoutes } from './demo/images.routes';
import { bullBoardRoutes } from './http/bull-board';
import { apiDocsRoutes } from './http/api-docs';
import { docsRoutes } from './http/docs';
import { errorHandler } from './http/errors';
import { healthRoutes } from './http/health';
import { clientErrorHandler, lingerAfterTooLarge } from './http/body-limit';
import { jsonBodyParser, refuseContentEncoding } from './http/json-body';
import { refuseUnstorableText } from './http/storable-text';
import { lazyRequestLogger, OneLineRequestLog } from './http/request-log';
import { internalRoutes } from './internal';
import { httpDuration, routeLabel } from './metrics';
import { portalRoutes } from './portal';
import { portalPageRoutes } from './portal/pages.routes';
import { useTestScryptCost } from './secrets';
import { trustedProxies } from './client-address';
import type { Services } from './services';

declare module 'fastify' {
  interface FastifyInstance {
    /** The click path behind both front doors; the demo records its click history through it. */
    clicks: ClickRecorder;
  }
}

/**
 * Builds the HTTP app on already-open services, without listening: tests inject
 * requests into it, `main.ts` listens. Each capability is one plugin.
 */
export async function buildApp(services: Services): Promise<FastifyInstance> {
  const { db, redis, config, log } = services;
  useTestScryptCost(config.testScryptN);
  const hosts = new AttributionHosts(db, services.linkChanges, log, serviceHostname(config.publicBaseUrl));
  const app = Fastify({
    loggerInstance: services.log as FastifyBaseLogger,
    // One line per request, when it is answered (src/http/request-log.ts).
    logController: new OneLineRequestLog(services.log),
    childLoggerFactory: lazyRequestLogger,
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    // The same check the click route makes (an IPv4 fast path), not proxy-addr's parse of every hop.
    trustProxy: typeof services.config.trustProxy === 'string' ? trustedProxies(services.config.trustProxy) : services.config.trustProxy,
    // A client must send its whole request within requestTimeout (a slow sender cannot hold a
    // socket); idle sockets close after connectionTimeout, idle keep-alive ones sooner.
    requestTimeout: services.config.timeouts.requestMs,
    // Node checks those limits every connectionsCheckingInterval (30 s by default): checked each
    // second, a late request is answered 408 or closed within a second of its limit (docs/hardening.md).
    http: {
      headersTimeout: services.config.timeouts.requestMs,
      connectionsCheckingInterval: Math.min(1000, services.config.timeouts.requestMs),
    },
    connectionTimeout: 120_000,
    keepAliveTimeout: 65_000,
    // A URL Fastify cannot route (malformed percent-encoding) still gets HTML on a link domain.
    frameworkErrors: unroutableUrl(hosts),
    // A request Node refuses before routing (431, 408) is answered with Connection: close.
    clientErrorHandler,
  });
  app.setErrorHandler(errorHandler);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, jsonBodyParser(app));
  // A compressed body is 415: the service decodes no Content-Encoding.
  app.addHook('preParsing', refuseContentEncoding);
  // Query strings and path ids holding text no store can hold: 400 / 404 on every route (docs/hardening.md#text-the-stores-cannot-hold).
  app.addHook('preValidation', refuseUnstorableText);
  // A 413 closes with a lingering close, so a client still sending sees the status, not a reset.
  app.addHook('onSend', lingerAfterTooLarge);
  app.setNotFoundHandler((_req, reply) => reply.status(404).send({ error: 'not_found' }));
  // The hooks every request runs are plain callbacks, not async functions (a promise each).
  app.addHook('onResponse', (req, reply, done) => {
    httpDuration.observe(
      { method: req.method, route: routeLabel(req, req.routeOptions.url), status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    done();
  });

  // Two front doors to one click path: POST /clicks and the link host (GET on an attribution domain).
  const recentAppClicks = new RecentAppClicks(redis, config.queuePrefix, config.ipMatchMemoryBytes);
  const clicks = new ClickRecorder({
    secretKey: config.secretKey,
    queues: services.queues,
    clickLinks: new ClickLinks(db, services.linkChanges),
    recentAppClicks,
    log,
  });
  app.decorate('clicks', clicks);
  // The redirect host never refuses a visitor: over the per-IP limit it serves the visit unrecorded (docs/link-host.md).
  const mayRecord = async (ip: string) => (await services.rateLimiter.consume('public_ip', ip))?.allowed ?? true;
  linkHostRoutes(app, { hosts, clicks, db, log, mayRecord });

  // Outbound webhooks' queue joins the fact queues on /healthz and the queue board.
  const webhooks = createWebhookServices(db, redis, config);
  app.addHook('onClose', () => webhooks.queue.close());
  await app.register(healthRoutes, { deps: { ...services, otherQueues: [webhooks.queue] } });
  // Each capability gets only what it uses: the Data API, for one, holds no queue (it never writes).
  const { warehouse, queues, linkChanges, rateLimiter } = services;
  const { publicBaseUrl, secretKey } = config;
  await app.register(bullBoardRoutes, { queues, otherQueues: [webhooks.queue.queue], adminJwtSecret: config.adminJwtSecret, publicBaseUrl });
  const domainDeps = { db, linkChanges, log, publicBaseUrl, dnsServers: config.dnsServers, reservedHostnames: config.reservedHostnames };
  await app.register(internalRoutes, {
    ...domainDeps,
    warehouse,
    queues,
    adminJwtSecret: config.adminJwtSecret,
    secretKey,
    webhooks,
    prefix: '/api/internal',
  });
  const { reads, recordChanges } = services;
  await app.register(dataApiRoutes, { db, warehouse, publicBaseUrl, rateLimiter, reads, prefix: '/api/v1' });
  const loginLimitPrefix = `${config.queuePrefix}:login-limit:`;
  await app.register(portalRoutes, { ...domainDeps, warehouse, reads, recordChanges, redis, loginLimitPrefix, secretKey, webhooks, rateLimiter, prefix: '/api/client' });
  await app.register(portalPageRoutes);
  // One ledger for the pixel/SDK events and the provider webhooks: one path to the ledger rows.
  const ledger = createLedger(services);
  // The ledger's credit sources: installs and events then share one memo of links.
  const installs = new InstallRecorder({ db, queues, log, credit: ledger.credit, recentAppClicks });
  const pixelKeys = new PixelKeys(db);
  const opens = new LinkOpens(db);
  const stopOpensPurge = startOpensPurge(opens, (err) => log.warn({ err }, 'could not purge expired link opens'));
  app.addHook('onClose', async () => stopOpensPurge());
  const publicDeps = { pixelKeys, clicks, installs, ledger, opens, rateLimiter, secretKey, log };
  await app.register(publicAttributionRoutes, { ...publicDeps, trustProxy: config.trustProxy, publicBaseUrl, prefix: '/api/public/attribution' });
  await app.register(pixelRoutes);
  await app.register(docsRoutes, { publicBaseUrl });
  await app.register(apiDocsRoutes);
  await app.register(demoImageRoutes);
  await app.register(webhookRoutes, {
    db,
    secretKey,
    publicBaseUrl,
    testAppleRootCa: config.testAppleRootCa,
    prefix: '/api/webhooks/attribution',
    recordLedgerEvent: ledger.record,
  });
  return app;
}
