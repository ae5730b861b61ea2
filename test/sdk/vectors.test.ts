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
      'purchase-before-install',
      'purchase-waits-for-pending-install',
      'killed-during-install',
      'killed-during-purchase',
      'kept-on-404-and-408',
      'dropped-on-400-and-413',
      'captive-portal',
      'gateway-empty-answer',
      'currency-refused',
      'attribution-kept',
      'deep-link-in-answer',
      'pasted-text',
      'would-read-clipboard',
      'clipboard-empty',
      'open',
      'open-failures',
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

  it('every case decodes as the Swift runner reads it: each call has call, requests and result; each request method, path, body and answer; a status is an integer', () => {
    for (const v of vectors) {
      expect(typeof v.description, v.name).toBe('string');
      expect(typeof v.config.endpoint, v.name).toBe('string');
      for (const launch of v.launches) {
        for (const call of launch) {
          expect(Object.keys(call), v.name).toEqual(expect.arrayContaining(['call', 'requests', 'result']));
          for (const r of call.requests) {
            expect(Object.keys(r), v.name).toEqual(expect.arrayContaining(['method', 'path', 'body', 'answer']));
            if ('status' in r.answer) expect(Number.isInteger(r.answer.status), v.name).toBe(true);
          }
        }
      }
    }
  });

  it('the runner ends a launch at a killed request, with the storage as it was when the request was sent', async () => {
    // A client whose writes during trackInstall land only once it settles (the old rule: stored after the request) fails it.
    const late: typeof sdk = {
      ...sdk,
      createClient: (config) => {
        const held: [string, string][] = [];
        let holding = false;
        const client = sdk.createClient({
          ...config,
          storage: {
            getItem: (key) => config.storage.getItem(key),
            setItem: async (key, value) => void (holding ? held.push([key, value]) : await config.storage.setItem(key, value)),
          },
        });
        return {
          ...client,
          trackInstall: async (options) => {
            holding = true;
            try {
              return await client.trackInstall(options);
            } finally {
              holding = false;
              for (const [key, value] of held.splice(0)) await config.storage.setItem(key, value);
            }
          },
        };
      },
    };
    const killed = vectors.find((v) => v.name === 'killed-during-install')!;
    expect(await runVector(killed, sdk)).toEqual([]);
    expect((await runVector(killed, late)).length).toBeGreaterThan(0);
  });

  for (const vector of vectors) {
    it(`${vector.name}: ${vector.description}`, async () => {
      expect(await runVector(vector, sdk)).toEqual([]);
    });
  }
});
