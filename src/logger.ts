import { type DestinationStream, pino, type Logger } from 'pino';

export type { Logger };

/** Query parameters whose values are secrets and never reach a log line (their names decoded, any case). */
const SECRET_PARAMETERS = new Set(['api_key', 'token']);
/** Webhook connection tokens are path segments (`/api/webhooks/attribution/:provider/svw_…`). */
const SECRET_SEGMENT_PREFIX = 'svw_';

/**
 * The URL with secret query values and `svw_` path segments replaced by `[redacted]`. Names and
 * segments are matched as the router reads them, percent-decoded: `?api%5Fkey=` and `/%73vw_…`
 * authenticate as well as the plain spellings.
 */
export function redactUrl(url: string): string {
  // The router ends the path at the first `?` or `#`, and reads the rest as the query.
  const q = url.search(/[?#]/);
  const path = q === -1 ? url : url.slice(0, q);
  const redactedPath = path.includes('%') || path.includes(SECRET_SEGMENT_PREFIX) ? path.split('/').map(redactSegment).join('/') : path;
  if (q === -1) return redactedPath;
  const query = url.slice(q + 1).split('&').map(redactParameter).join('&');
  return `${redactedPath}${url[q]}${query}`;
}

function redactSegment(segment: string): string {
  return decoded(segment).startsWith(SECRET_SEGMENT_PREFIX) ? `${SECRET_SEGMENT_PREFIX}[redacted]` : segment;
}

function redactParameter(pair: string): string {
  const eq = pair.indexOf('=');
  const name = eq === -1 ? pair : pair.slice(0, eq);
  return SECRET_PARAMETERS.has(decoded(name.replaceAll('+', ' ')).toLowerCase()) ? `${name}=[redacted]` : pair;
}

/**
 * Each `%XX` as the byte it encodes: enough to compare with the ASCII names above, linear and
 * never throwing on the malformed encodings a hostile URL may hold.
 */
function decoded(text: string): string {
  return text.includes('%') ? text.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))) : text;
}

/**
 * A service process's log stream (standard output unless told), written 4 KiB at a time and at least every 100 ms:
 * a write per line cost 3-4% of a click's HTTP thread (docs/benchmarks.md). pino writes what is left
 * when the process exits; a signal the process does not handle (SIGKILL, SIGHUP) loses what is not yet
 * written: the last 100 ms of lines, more while the reader of standard output falls behind.
 */
export function bufferedLogStream(fd: 1 | 2 = 1): DestinationStream {
  return pino.destination({ dest: fd, minLength: 4096, periodicFlush: 100 });
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
