import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * How long, and how much more of a refused body, the server reads after its 413 before it
 * closes (issue 19 item 13). Enough for an ordinary client posting a few MiB to finish
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
