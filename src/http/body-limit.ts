import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * How long, and how much more of a refused body, the server reads after its 413 before it
 * closes (docs/hardening.md#bodies-over-a-limit-413-and-a-lingering-close). Enough for an ordinary client posting a few MiB to finish
 * sending and read the status; a sender that goes on is cut off there.
 */
export const LINGER = { ms: 5_000, bytes: 8 * 1024 * 1024 };

/**
 * An onSend hook: a 413 half-closes the connection and reads on, discarding, until the client
 * closes or LINGER runs out. Destroying the socket at once would make the kernel reset it, and a
 * client still sending would see the reset instead of the 413.
 */
export function lingerAfterTooLarge(req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void): void {
  const socket = req.raw.socket;
  if (reply.statusCode === 413 && socket && !socket.destroyed) lingerOnClose(socket);
  done(null, payload);
}

function lingerOnClose(socket: Socket): void {
  // Node calls destroySoon once the answer is written on a connection it closes.
  socket.destroySoon = () => {
    // Node's HTTP parser reads the socket natively and drops a refused body: no 'data' events to
    // count, but bytesRead still grows. Polled, so a fast sender may get a little past the budget.
    const readBefore = socket.bytesRead;
    const check = setInterval(() => {
      if (socket.bytesRead - readBefore > LINGER.bytes) socket.destroy();
    }, 10).unref();
    const cut = setTimeout(() => socket.destroy(), LINGER.ms).unref();
    socket.once('close', () => {
      clearInterval(check);
      clearTimeout(cut);
    });
    socket.end(); // the client sees the 413 and our FIN; its own close then ends the socket
  };
}

/** What a request that never reached a route is answered (Fastify's clientErrorHandler). */
const CLIENT_ERRORS: Record<string, { status: number; reason: string; error: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, reason: 'Request Timeout', error: 'request_timeout' },
  HPE_HEADER_OVERFLOW: { status: 431, reason: 'Request Header Fields Too Large', error: 'header_fields_too_large' },
};
const BAD_REQUEST = { status: 400, reason: 'Bad Request', error: 'bad_request' };

/**
 * Node's parser refused a request (headers too large, a timeout, malformed HTTP): answer it with
 * `Connection: close` (a keep-alive client then opens a new connection for its next request
 * instead of reusing a dead one), then close gently as after a 413 rather than resetting.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  // Node's parser may report a refused connection again as more of it arrives: answer once.
  if (err.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
  answered.add(socket);
  const { status, reason, error } = CLIENT_ERRORS[err.code ?? ''] ?? BAD_REQUEST;
  const body = JSON.stringify({ error });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  if (status === 408) {
    // A client too slow to send its request gets no more time: closed at once, gently if it can be.
    socket.end();
    setTimeout(() => socket.destroy(), 1_000).unref();
    return;
  }
  lingerOnClose(socket);
  socket.destroySoon();
}

const answered = new WeakSet<Socket>();
