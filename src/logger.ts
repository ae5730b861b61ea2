import { type DestinationStream, pino, type Logger } from 'pino';

export type { Logger };

/** Query parameters whose values are secrets and never reach a log line. */
const SECRET_QUERY = /([?&](?:api_key|token)=)[^&]*/gi;
/** Webhook connection tokens are path segments (`/api/webhooks/attribution/:provider/svw_…`). */
const SECRET_SEGMENT = /\/svw_[^/?#]*/g;

export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY, '$1[redacted]').replace(SECRET_SEGMENT, '/svw_[redacted]');
}

/** Structured logs; credentials in headers, bodies and URLs are redacted. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["x-svc-api-key"]',
        'res.headers["set-cookie"]',
        '*.password',
        '*.signing_secret',
        '*.key',
      ],
      censor: '[redacted]',
    },
    serializers: {
      req(req: { method: string; url: string; ip?: string; id?: string }) {
        return { id: req.id, method: req.method, url: redactUrl(req.url) };
      },
    },
  }, destination);
}

/**
 * A logger for lines whose fields are fixed and hold no secret (the request line, its url
 * redacted): the same level and stream, without the wildcard redaction that costs 3-4 µs a line.
 */
export function unredactedLogger(log: Logger): Logger {
  return log.child({}, { redact: [] });
}
