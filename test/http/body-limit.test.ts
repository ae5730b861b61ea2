import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINGER } from '../../src/http/body-limit';
import { destroyTestService, sleep, startTestService, type TestService } from '../helpers/harness';

/**
 * A body over a limit is answered 413 and the rest of it is
 * read (bounded), so an ordinary client sees the status instead of a reset. Over a real
 * socket: inject never resets.
 */
let t: TestService;
let base: string;
beforeAll(async () => {
  t = await startTestService({ workers: false });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => destroyTestService(t));

const EVENTS = '/api/public/attribution/events';
/** A JSON body of about `bytes` bytes. */
const bigJson = (bytes: number) => JSON.stringify({ pixel_key: 'pk_x', padding: 'x'.repeat(bytes) });

describe('bodies over a limit, on a real socket', () => {
  it('Node fetch posting 1 MiB and 4 MiB to a public endpoint sees 413 payload_too_large', async () => {
    for (const size of [1, 2, 3, 4, 1, 2, 3, 4].map((m) => m * 1024 * 1024)) {
      const res = await fetch(`${base}${EVENTS}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bigJson(size) });
      expect(res.status, `${size} bytes`).toBe(413);
      expect(await res.json()).toEqual({ error: 'payload_too_large' });
    }
  });

  it('a body sent as it is produced (chunked, as over a slow link) sees 413 too', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(32 * 1024));
    for (let round = 0; round < 3; round++) {
      let sent = 0;
      // 1 MiB in 32 KiB pieces 5 ms apart: the sender is still sending when the limit is passed.
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await new Promise((r) => setTimeout(r, 5));
          if (sent++ < 32) controller.enqueue(chunk);
          else controller.close();
        },
      });
      const res = await fetch(`${base}${EVENTS}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit);
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({ error: 'payload_too_large' });
    }
  });

  it('curl posting 2 MiB sees 413', async () => {
    const file = join(tmpdir(), `svc-body-limit-${process.pid}.json`);
    writeFileSync(file, bigJson(2 * 1024 * 1024));
    const { stdout } = await promisify(execFile)('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-H', 'content-type: application/json', '--data-binary', `@${file}`, `${base}${EVENTS}`]);
    expect(stdout).toBe('413');
  });

  it('reads the rest of the body after the 413 and then closes gently: a sender still writing gets no reset', async () => {
    for (let round = 0; round < 3; round++) {
      const client = rawClient();
      const body = Buffer.alloc(2 * 1024 * 1024, 'x');
      client.socket.write(`POST ${EVENTS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      client.socket.write(body.subarray(0, 256 * 1024));
      await client.answered; // the 413 is out; the client only now sends the rest, as a slow link would
      await sleep(50);
      await new Promise<void>((resolve, reject) => client.socket.write(body.subarray(256 * 1024), (err) => (err ? reject(err) : resolve())));
      client.socket.end();
      await client.closed;
      expect(client.answer()).toMatch(/^HTTP\/1\.1 413 [\s\S]*\{"error":"payload_too_large"\}$/);
      expect(client.error()).toBeUndefined(); // no EPIPE or ECONNRESET while the body was still going out
      expect(client.endedByServer()).toBe(true); // a FIN, not a reset
    }
  });

  it('reads on for a bounded time and amount only: a sender that never stops is cut off', async () => {
    const started = Date.now();
    const client = rawClient();
    client.socket.write(`POST ${EVENTS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${1024 ** 3}\r\n\r\n`);
    // 64 KiB every 50 ms: 1.3 MiB a second, far short of the gibibyte announced.
    const block = Buffer.alloc(64 * 1024, 'x');
    const timer = setInterval(() => client.socket.writable && client.socket.write(block), 50);
    await client.closed;
    clearInterval(timer);
    expect(client.answer()).toMatch(/^HTTP\/1\.1 413/);
    expect(Date.now() - started).toBeLessThan(LINGER.ms + 3_000);
    expect(Date.now() - started).toBeGreaterThan(LINGER.ms - 1_000);
  }, 20_000);

  it('a fast sender that never stops is cut off after LINGER.bytes, before the time runs out', async () => {
    const started = Date.now();
    const client = rawClient();
    client.socket.write(`POST ${EVENTS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${1024 ** 3}\r\n\r\n`);
    const block = Buffer.alloc(256 * 1024, 'x');
    let written = 0;
    const pump = () => {
      while (client.socket.writable && !client.socket.destroyed) {
        written += block.length;
        if (!client.socket.write(block)) return client.socket.once('drain', pump);
      }
    };
    pump();
    await client.closed;
    expect(client.answer()).toMatch(/^HTTP\/1\.1 413/);
    expect(Date.now() - started).toBeLessThan(LINGER.ms);
    // Far short of the gibibyte announced: what the server read (its count is polled every 10 ms,
    // and loopback moves tens of MiB in that time) plus what the kernels' buffers held.
    expect(written).toBeLessThan(64 * 1024 * 1024);
    expect(written).toBeGreaterThan(LINGER.bytes);
  }, 20_000);
});

describe('answers that close the connection say so', () => {
  const bigHeader = 'x'.repeat(20 * 1024); // past Node's 16 KiB of headers

  it('a 431 for headers too large carries Connection: close and a JSON code, then a FIN, not a reset', async () => {
    for (let round = 0; round < 3; round++) {
      const client = rawClient();
      client.socket.once('end', () => client.socket.end()); // half-open allowed: close our side once the server has
      client.socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nX-Big: ${bigHeader}\r\n\r\n`);
      await client.closed;
      const [head, body] = client.answer().split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 431 /);
      expect(head!.toLowerCase().split('\r\n')).toContain('connection: close');
      expect(JSON.parse(body!)).toEqual({ error: 'header_fields_too_large' });
      expect(client.error()).toBeUndefined();
      expect(client.endedByServer()).toBe(true);
    }
  });

  it('a 413 carries Connection: close', async () => {
    const client = rawClient();
    client.socket.once('end', () => client.socket.end());
    const body = bigJson(128 * 1024);
    client.socket.write(`POST ${EVENTS} HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    await client.closed;
    const head = client.answer().split('\r\n\r\n')[0]!;
    expect(head).toMatch(/^HTTP\/1\.1 413 /);
    expect(head.toLowerCase().split('\r\n')).toContain('connection: close');
  });

  it("a keep-alive client's next request after a 431 is answered (fetch keeps connections alive)", async () => {
    for (let round = 0; round < 5; round++) {
      const refused = await fetch(`${base}/healthz`, { headers: { 'x-big': bigHeader } });
      expect(refused.status).toBe(431);
      expect(refused.headers.get('connection')).toBe('close');
      await refused.arrayBuffer();
      const next = await fetch(`${base}/api/v1/brand`);
      expect(next.status).toBe(401); // answered: a new connection, not the closed one
    }
  });
});

/** A client on a raw socket, to see what a server does with the connection (FIN or reset) after its answer. */
function rawClient() {
  // Half-open allowed, as a sender that goes on writing its body after the server's FIN.
  const socket = connect({ port: Number(new URL(base).port), host: '127.0.0.1', allowHalfOpen: true });
  let answer = '';
  let error: Error | undefined;
  let ended = false;
  let onAnswer: () => void = () => {};
  const answered = new Promise<void>((resolve) => {
    onAnswer = resolve;
  });
  socket.on('data', (d) => {
    answer += d.toString();
    if (answer.includes('\r\n\r\n')) onAnswer();
  });
  socket.on('end', () => {
    ended = true;
  });
  socket.on('error', (err) => {
    error = err;
  });
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { socket, answered, closed, answer: () => answer, error: () => error, endedByServer: () => ended };
}
