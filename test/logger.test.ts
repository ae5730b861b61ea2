import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createLogger, redactUrl } from '../src/logger';

describe('logs', () => {
  it('never carry API keys or tokens from URLs', () => {
    expect(redactUrl('/api/v1/posts?limit=5&api_key=sk_secret&sort=views')).toBe('/api/v1/posts?limit=5&api_key=[redacted]&sort=views');
    expect(redactUrl('/admin/queues?token=eyJhbGci.x.y')).toBe('/admin/queues?token=[redacted]');
    // Webhook connection tokens, on every route and method (a GET or a 404 too).
    expect(redactUrl('/api/webhooks/attribution/stripe/svw_s3cret?x=1')).toBe('/api/webhooks/attribution/stripe/svw_[redacted]?x=1');
    expect(redactUrl('/api/v1/brand')).toBe('/api/v1/brand');
    expect(redactUrl('/api/v1/daily?period=30d&campaign_id=a%20b')).toBe('/api/v1/daily?period=30d&campaign_id=a%20b');
  });

  it('never carry them percent-encoded either: the router decodes names and segments before it reads them', () => {
    expect(redactUrl('/api/v1/brand?api%5Fkey=sk_secret')).toBe('/api/v1/brand?api%5Fkey=[redacted]');
    expect(redactUrl('/api/v1/brand?API_KEY=sk_secret&x=1')).toBe('/api/v1/brand?API_KEY=[redacted]&x=1');
    expect(redactUrl('/admin/queues?%74oken=eyJhbGci.x.y')).toBe('/admin/queues?%74oken=[redacted]');
    expect(redactUrl('/api/v1/posts?api_key')).toBe('/api/v1/posts?api_key=[redacted]');
    expect(redactUrl('/api/webhooks/attribution/stripe/%73vw_s3cret')).toBe('/api/webhooks/attribution/stripe/svw_[redacted]');
    expect(redactUrl('/api/webhooks/attribution/stripe/sv%77_s3cret?x=%ZZ')).toBe('/api/webhooks/attribution/stripe/svw_[redacted]?x=%ZZ');
    // The router also ends the path at `#` (a raw request may carry one) and reads the rest as the query.
    expect(redactUrl('/api/v1/brand#api_key=sk_secret&x=1')).toBe('/api/v1/brand#api_key=[redacted]&x=1');
  });

  it('reads hostile URLs (malformed encodings, thousands of parameters) without failing', () => {
    const hostile = `/api/v1/%/${'%/'.repeat(4000)}?${'%&'.repeat(8000)}%61pi_key=sk_secret`;
    const out = redactUrl(hostile);
    expect(out.endsWith('%61pi_key=[redacted]')).toBe(true);
    expect(out).not.toContain('sk_secret');
  });

  it('redact credentials in headers and bodies', () => {
    const lines: string[] = [];
    const log = createLogger('info', { write: (line: string) => lines.push(line) });
    log.info({
      req: {
        id: 'req-1',
        method: 'GET',
        url: '/api/v1/brand?api_key=sk_query',
        headers: { authorization: 'Bearer sk_live', cookie: 'svc_session=abc', 'x-svc-api-key': 'sk_hdr' },
      },
      body: { password: 'hunter2hunter2', signing_secret: 'whsec_1' },
    });
    const out = lines.join('');
    for (const secret of ['sk_query', 'sk_live', 'svc_session=abc', 'sk_hdr', 'hunter2hunter2', 'whsec_1']) expect(out).not.toContain(secret);
    expect(out).toContain('[redacted]');
    expect(JSON.parse(out).req).toEqual({ id: 'req-1', method: 'GET', url: '/api/v1/brand?api_key=[redacted]' });
  });
});

describe("a service process's log output (bufferedLogStream)", () => {
  it('shows a lone line within 100 ms, and every line of a burst when the process exits right after it', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/buffered-log-entry.ts'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const events: string[] = [];
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      if (!out.includes('"alone"') && d.toString().includes('"alone"')) events.push('alone');
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      if (d.toString().includes('paused')) events.push('paused');
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(code).toBe(0);
    // The lone line was out before the 400 ms pause ended, not held for 4 KiB of company.
    expect(events).toEqual(['alone', 'paused']);
    const lines = out.trim().split('\n').map((l) => JSON.parse(l) as { n: number });
    expect(lines.map((l) => l.n)).toEqual(Array.from({ length: 501 }, (_, n) => n));
  });
});
