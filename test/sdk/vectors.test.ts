import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as sdk from '../../sdk/react-native/src/index';
import { loadVectors, runVector, VECTORS_DIR } from './vector-runner';

const vectors = loadVectors();

describe('sdk/vectors: every behaviour case against the React Native SDK (stub fetch)', () => {
  it('finds the cases the issue names', () => {
    const names = vectors.map((v) => v.name);
    for (const name of [
      'first-launch',
      'offline-then-retry',
      'already-reported',
      'clipboard-filter',
      'clipboard-refused',
      'code',
      'purchase',
      'purchase-retry-after-failure',
      'sandbox',
      'storage-failure',
    ]) {
      expect(names).toContain(name);
    }
  });

  it('names each case after its file, and the README lists every case', () => {
    const files = readdirSync(VECTORS_DIR).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -'.json'.length)).sort();
    expect(vectors.map((v) => v.name).sort()).toEqual(files);
    const readme = readFileSync(new URL('README.md', VECTORS_DIR), 'utf8');
    const listed = [...readme.slice(readme.indexOf('## The cases')).matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]);
    expect(listed.sort()).toEqual(files);
  });

  it('the runner reports a wrong body, a request not expected and a wrong storage after', async () => {
    const first = structuredClone(vectors.find((v) => v.name === 'first-launch')!);
    const [install] = first.launches[0]!;
    (install!.requests[0]!.body as Record<string, unknown>).app_version = '9.9.9';
    first.storage.after.svc_install_reported = 'false';
    const problems = await runVector(first, sdk);
    expect(problems.some((p) => p.includes('body.app_version'))).toBe(true);
    expect(problems.some((p) => p.includes('storage after.svc_install_reported'))).toBe(true);

    const purchase = structuredClone(vectors.find((v) => v.name === 'purchase')!);
    purchase.launches[0]![1]!.requests = [];
    expect((await runVector(purchase, sdk)).some((p) => p.includes('unexpected request POST https://svc.test/api/public/attribution/events'))).toBe(true);
  });

  for (const vector of vectors) {
    it(`${vector.name}: ${vector.description}`, async () => {
      expect(await runVector(vector, sdk)).toEqual([]);
    });
  }
});
