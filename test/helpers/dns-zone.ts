import { createSocket } from 'node:dgram';
import { type AddressInfo, isIPv6 } from 'node:net';

export type ZoneRecords = { A?: string[]; AAAA?: string[]; TXT?: string[]; CNAME?: string };

/**
 * A real DNS server on 127.0.0.1 for domain verification and webhook URL tests (the service's
 * DNS_SERVERS): a minimal UDP responder for A, AAAA, TXT and CNAME questions from `zone`, NXDOMAIN
 * for unknown names. While `silent`, it drops every question, as an unreachable name server would.
 */
export async function startDnsZone() {
  const zone = new Map<string, ZoneRecords>();
  const state = { silent: false };
  /** Called with each question's name after it is answered (a test changes the zone there). */
  const hooks: { answered?: (name: string) => void } = {};
  const socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    if (state.silent) return;
    const { reply, name } = answer(query, zone);
    socket.send(reply, peer.port, peer.address);
    hooks.answered?.(name);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address() as AddressInfo;
  return {
    zone,
    state,
    hooks,
    /** The DNS_SERVERS value that reaches this server. */
    server: `127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** A DNS response to `query` from `zone` (RFC 1035 section 4.1), without name compression except for the question. */
function answer(query: Buffer, zone: Map<string, ZoneRecords>): { reply: Buffer; name: string } {
  const labels: string[] = [];
  let at = 12;
  while (query[at]! > 0) {
    labels.push(query.subarray(at + 1, at + 1 + query[at]!).toString());
    at += query[at]! + 1;
  }
  const qtype = query.readUInt16BE(at + 1);
  const question = query.subarray(12, at + 5);
  const name = labels.join('.').toLowerCase();
  const records = zone.get(name);
  const rdatas: Buffer[] = [];
  let type = qtype;
  if (records?.CNAME) {
    type = 5;
    rdatas.push(encodeName(records.CNAME));
  } else if (qtype === 1) {
    for (const a of records?.A ?? []) rdatas.push(Buffer.from(a.split('.').map(Number)));
  } else if (qtype === 28) {
    for (const a of records?.AAAA ?? []) if (isIPv6(a)) rdatas.push(ipv6Bytes(a));
  } else if (qtype === 16) {
    for (const txt of records?.TXT ?? []) rdatas.push(Buffer.concat([Buffer.from([txt.length]), Buffer.from(txt)]));
  }
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  header.writeUInt16BE(0x8180 | (records ? 0 : 3), 2); // response, recursion available; NXDOMAIN for unknown names
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(rdatas.length, 6);
  const answers = rdatas.map((rdata) => {
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // the question's name
    rr.writeUInt16BE(type, 2);
    rr.writeUInt16BE(1, 4);
    rr.writeUInt32BE(0, 6); // TTL 0: tests change the zone between questions
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([rr, rdata]);
  });
  return { reply: Buffer.concat([header, question, ...answers]), name };
}

function ipv6Bytes(address: string): Buffer {
  const [head = '', tail = ''] = address.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => {
    out.writeUInt16BE(Number.parseInt(g, 16), i * 2);
  });
  return out;
}

function encodeName(name: string): Buffer {
  const parts = name.replace(/\.$/, '').split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
  return Buffer.concat([...parts, Buffer.from([0])]);
}
