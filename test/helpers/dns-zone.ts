import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';

export type ZoneRecords = { A?: string[]; TXT?: string[]; CNAME?: string };

/**
 * A real DNS server on 127.0.0.1 for domain verification tests (the service's DNS_SERVERS): a
 * minimal UDP responder for A, TXT and CNAME questions from `zone`, NXDOMAIN for unknown names.
 * While `silent`, it drops every question, as an unreachable name server would.
 */
export async function startDnsZone() {
  const zone = new Map<string, ZoneRecords>();
  const state = { silent: false };
  const socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    if (!state.silent) socket.send(answer(query, zone), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address() as AddressInfo;
  return {
    zone,
    state,
    /** The DNS_SERVERS value that reaches this server. */
    server: `127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** A DNS response to `query` from `zone` (RFC 1035 section 4.1), without name compression except for the question. */
function answer(query: Buffer, zone: Map<string, ZoneRecords>): Buffer {
  const labels: string[] = [];
  let at = 12;
  while (query[at]! > 0) {
    labels.push(query.subarray(at + 1, at + 1 + query[at]!).toString());
    at += query[at]! + 1;
  }
  const qtype = query.readUInt16BE(at + 1);
  const question = query.subarray(12, at + 5);
  const records = zone.get(labels.join('.').toLowerCase());
  const rdatas: Buffer[] = [];
  let type = qtype;
  if (records?.CNAME) {
    type = 5;
    rdatas.push(encodeName(records.CNAME));
  } else if (qtype === 1) {
    for (const a of records?.A ?? []) rdatas.push(Buffer.from(a.split('.').map(Number)));
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
    rr.writeUInt32BE(60, 6);
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([rr, rdata]);
  });
  return Buffer.concat([header, question, ...answers]);
}

function encodeName(name: string): Buffer {
  const parts = name.replace(/\.$/, '').split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
  return Buffer.concat([...parts, Buffer.from([0])]);
}
