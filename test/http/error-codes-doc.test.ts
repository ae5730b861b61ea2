import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Every error code the service answers is listed in docs/api.md's table of error codes. */
const root = resolve(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return path.startsWith('src/portal/web') ? [] : sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

// The ways code names an answered error: a body's `error`, a refusal, a public or webhook refusal.
const CODE_SITES = [
  /\berror: '([a-z_]+)'/g,
  /\b(?:conflict|forbidden)\('([a-z_]+)'\)/g,
  /\bnew Refusal\('[a-z_]+', '([a-z_]+)'/g,
  /\brefuse\(\d{3}, '([a-z_]+)'[,)]/g,
  /\b(?:unauthenticated|unparseable)\('([a-z_]+)'\)/g,
];
// Values that are not answers: a delivery attempt's recorded outcome (outbound webhooks).
const NOT_ANSWERS = new Set(['timeout']);

describe('docs/api.md error codes', () => {
  it('lists every error code the source answers, in its table', () => {
    const doc = readFileSync(join(root, 'docs/api.md'), 'utf8');
    const table = doc.slice(doc.indexOf('## Error codes'));
    expect(table.length).toBeGreaterThan(100);
    const codes = new Set<string>();
    for (const file of [...sourceFiles('src'), ...sourceFiles('workers')]) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const site of CODE_SITES) for (const m of text.matchAll(site)) codes.add(m[1]!);
    }
    for (const code of ['unsupported_media_type', 'invalid_parameter', 'payload_too_large', 'header_fields_too_large']) expect(codes).toContain(code);
    const missing = [...codes].filter((code) => !NOT_ANSWERS.has(code) && !table.includes(`\`${code}\``));
    expect(missing).toEqual([]);
  });
});
