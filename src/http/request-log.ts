import { randomBytes } from 'node:crypto';
import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { type Logger, redactUrl, unredactedLogger } from '../logger';

/**
 * The header and this process's random value that its own injected requests carry to go unlogged
 * (the demo's seeding: a start would otherwise print a line per set-up call before its banner).
 */
export const QUIET_REQUEST = { header: 'x-svc-quiet', token: randomBytes(16).toString('hex') } as const;

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
    if (!this.lines.isLevelEnabled('info') || request.headers[QUIET_REQUEST.header] === QUIET_REQUEST.token) return;
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

type LogArgs = Parameters<Logger['info']>;
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * A request's logger (`req.log`), made on first use: most requests log only their one line, which
 * does not use it, and a pino child per request is a few µs of every click (docs/benchmarks.md).
 */
class LazyRequestLogger {
  private made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: object,
  ) {}

  get log(): Logger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  get level(): string {
    return this.log.level;
  }
  set level(level: string) {
    this.log.level = level;
  }
  child(bindings: Record<string, unknown>, options?: object) {
    return this.log.child(bindings, options);
  }
}
// One method per level, each writing through the logger made on first use.
for (const level of LEVELS) {
  Object.defineProperty(LazyRequestLogger.prototype, level, {
    value(this: LazyRequestLogger, ...args: LogArgs) {
      this.log[level](...args);
    },
  });
}

/** Fastify's `childLoggerFactory`: each request's logger made only when something logs through it. */
export function lazyRequestLogger(parent: FastifyBaseLogger, bindings: Record<string, unknown>, options: object): FastifyBaseLogger {
  return new LazyRequestLogger(parent as Logger, bindings, options) as unknown as FastifyBaseLogger;
}
