import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { type Logger, redactUrl } from '../logger';

/**
 * One log line per request, when the answer is sent, instead of Fastify's two: at the default
 * level the log is a large share of an ingestion request's cost (docs/benchmarks.md). Fastify's
 * error lines stay; the client address is not logged.
 */
export class OneLineRequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) {
      super.requestCompleted(error, request, reply);
      return;
    }
    // Skips building the line at `warn` and above (the app's logger is pino); the reqId comes from the request's child logger.
    if (!(request.log as Logger).isLevelEnabled('info')) return;
    request.log.info(
      { method: request.method, url: redactUrl(request.url), statusCode: reply.statusCode, responseTime: Math.round(reply.elapsedTime * 10) / 10 },
      'request completed',
    );
  }
}
