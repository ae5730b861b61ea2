import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { type Logger, redactUrl, unredactedLogger } from '../logger';

/**
 * One log line per request, when the answer is sent, instead of Fastify's two: at the default
 * level the log is a large share of an ingestion request's cost (docs/benchmarks.md). Fastify's
 * error lines stay; the client address is not logged.
 */
export class OneLineRequestLog extends LogController {
  private readonly lines: Logger;

  constructor(log: Logger) {
    super();
    this.lines = unredactedLogger(log);
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) {
      super.requestCompleted(error, request, reply);
      return;
    }
    // Skips building the line at `warn` and above.
    if (!this.lines.isLevelEnabled('info')) return;
    this.lines.info(
      {
        reqId: request.id,
        method: request.method,
        url: redactUrl(request.url),
        statusCode: reply.statusCode,
        responseTime: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request completed',
    );
  }
}
