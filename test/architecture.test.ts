import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The import rules of docs/architecture.md, read from the import lines of src/ and workers/.
// A rule lists every import that breaks it; ALLOWED holds today's known breaks, each with the
// change that removes it, so the list can only shrink.

const root = resolve(import.meta.dirname, '..');

type Import = { from: string; to: string; spec: string };

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return sourceFiles(path);
    return /\.(ts|mjs)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

// Static imports and re-exports (one or many lines), side-effect imports and literal import().
const IMPORT = /^\s*(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;

function resolveSpec(from: string, spec: string): string {
  if (!spec.startsWith('.')) return spec; // a package, e.g. 'fastify' or 'node:fs'
  const base = relative(root, resolve(root, dirname(from), spec));
  for (const candidate of [base, `${base}.ts`, `${base}/index.ts`, base.replace(/\.js$/, '.ts')]) {
    if (existsSync(join(root, candidate)) && statSync(join(root, candidate)).isFile()) return candidate;
  }
  throw new Error(`${from}: cannot resolve import '${spec}'`);
}

function readImports(files: string[]): Import[] {
  return files.flatMap((from) =>
    [...readFileSync(join(root, from), 'utf8').matchAll(IMPORT)].map((m) => {
      const spec = (m[1] ?? m[2] ?? m[3]) as string;
      return { from, spec, to: resolveSpec(from, spec) };
    }),
  );
}

const files = [...sourceFiles('src'), ...sourceFiles('workers')];
const imports = readImports(files);

// The parts of the house (see docs/architecture.md).
const under = (...folders: string[]) => (f: string) => folders.some((d) => f.startsWith(`${d}/`));
const isPlumbing = (f: string) =>
  under('src/db', 'src/warehouse', 'src/queues', 'src/http', 'src/reads')(f) ||
  /^src\/(config|logger|metrics|repeated-log|secrets|platforms|wait-for-release|refusal|storable-text|recordable-time|client-address)\.ts$/.test(f);
const isCapability = under('src/attribution', 'src/data-api', 'src/portal', 'src/internal', 'src/demo');
const isRouteFile = (f: string) =>
  /(^|\/|\.)routes\.ts$/.test(f) || f === 'src/app.ts' || /^src\/(data-api|portal|internal)\/index\.ts$/.test(f) || f.startsWith('src/attribution/public/');
const isComposition = (f: string) => /^src\/(app|services|main|cli)\.ts$/.test(f);
// Domain code: the attribution capability apart from the files that speak HTTP, placements, and
// src/facts.ts (each fact kind's row type, which the recorders and the queues share).
const isPlacements = under('src/placements');
const isDomain = (f: string) => (f.startsWith('src/attribution/') && !isRouteFile(f)) || isPlacements(f) || f === 'src/facts.ts';
const isBrowser = under('src/portal/web');
const isWorker = under('workers');

type Rule = { name: string; breaks: (i: Import) => boolean };

const RULES: Rule[] = [
  {
    name: 'domain code never imports Fastify, src/http, route files or the composition root',
    breaks: (i) => isDomain(i.from) && (i.to === 'fastify' || under('src/http')(i.to) || isRouteFile(i.to) || isComposition(i.to)),
  },
  {
    name: 'src/data-api and src/portal never import each other',
    breaks: (i) =>
      (under('src/data-api')(i.from) && under('src/portal')(i.to)) || (under('src/portal')(i.from) && under('src/data-api')(i.to)),
  },
  {
    name: 'plumbing never imports a capability, a worker or the composition root',
    breaks: (i) => isPlumbing(i.from) && (isCapability(i.to) || isDomain(i.to) || isWorker(i.to) || isComposition(i.to)),
  },
  {
    name: 'workers never import route files',
    breaks: (i) => isWorker(i.from) && isRouteFile(i.to),
  },
  {
    name: 'the browser portal imports only its own files and packages',
    breaks: (i) => isBrowser(i.from) && i.to !== i.spec && !isBrowser(i.to),
  },
  {
    name: 'placements and src/facts.ts import no capability: the Data API, the internal API and the workers use them',
    breaks: (i) => (isPlacements(i.from) || i.from === 'src/facts.ts') && isCapability(i.to) && !isDomain(i.to),
  },
  {
    name: 'answers are kept by the read pipeline only: nothing outside src/reads imports the answer cache',
    breaks: (i) => i.to === 'src/reads/answers.ts' && !under('src/reads')(i.from),
  },
];

// Known breaks, as `rule index: from -> to`, each with the change that removes it named beside it.
const ALLOWED = new Set<string>([]);

const key = (rule: number, i: Import) => `${rule}: ${i.from} -> ${i.to}`;

function cycles(among: Import[] = imports): string[][] {
  const edges = new Map<string, string[]>();
  for (const i of among) if (i.to !== i.spec) edges.set(i.from, [...(edges.get(i.from) ?? []), i.to]);
  // Tarjan's strongly connected components: each with more than one file is an import cycle.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const f of edges.keys()) if (!index.has(f)) visit(f);
  return found;
}

// Cycles known today, each as its files sorted and joined by ' ', with the item that breaks it.
const ALLOWED_CYCLES = new Set<string>([]);

describe('import rules (docs/architecture.md)', () => {
  it('reads the imports of every source file', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(imports.some((i) => i.from === 'src/app.ts' && i.to === 'fastify')).toBe(true);
  });

  it('each rule catches the import it forbids, and lets the allowed direction pass', () => {
    const imp = (from: string, to: string): Import => ({ from, to, spec: to.includes('/') ? `./${to}` : to });
    const breaks = (i: Import) => RULES.filter((r) => r.breaks(i)).map((r) => r.name);
    expect(breaks(imp('src/attribution/links/resolve.ts', 'fastify'))).toEqual([RULES[0]!.name]);
    expect(breaks(imp('src/attribution/ledger/record.ts', 'src/http/errors.ts'))).toEqual([RULES[0]!.name]);
    expect(breaks(imp('src/attribution/webhooks/routes.ts', 'src/http/errors.ts'))).toEqual([]);
    expect(breaks(imp('src/portal/range.ts', 'src/data-api/params.ts'))).toEqual([RULES[1]!.name]);
    expect(breaks(imp('src/db/batcher.ts', 'src/attribution/links/resolve.ts'))).toEqual([RULES[2]!.name]);
    expect(breaks(imp('src/attribution/links/resolve.ts', 'src/db/batcher.ts'))).toEqual([]);
    expect(breaks(imp('workers/writers.ts', 'src/portal/links.routes.ts'))).toEqual([RULES[3]!.name]);
    expect(breaks(imp('src/portal/web/main.ts', 'src/portal/schemas.ts'))).toEqual([RULES[4]!.name]);
    expect(breaks(imp('src/placements/intake.ts', 'src/internal/schemas.ts'))).toEqual([RULES[5]!.name]);
    expect(breaks(imp('src/placements/intake.ts', 'src/http/route.ts'))).toEqual([RULES[0]!.name]);
    expect(breaks(imp('src/facts.ts', 'src/data-api/queries.ts'))).toEqual([RULES[5]!.name]);
    expect(breaks(imp('src/facts.ts', 'src/attribution/clicks/fact.ts'))).toEqual([]);
    expect(breaks(imp('src/internal/placements.routes.ts', 'src/placements/intake.ts'))).toEqual([]);
    expect(breaks(imp('src/warehouse/values.ts', 'src/placements/facts.ts'))).toEqual([RULES[2]!.name]);
    expect(breaks(imp('src/portal/list.ts', 'src/reads/answers.ts'))).toEqual([RULES[6]!.name]);
    expect(breaks(imp('src/portal/list.ts', 'src/reads/pipeline.ts'))).toEqual([]);
    expect(breaks(imp('src/reads/pipeline.ts', 'src/data-api/queries.ts'))).toEqual([RULES[2]!.name]);
    const loop = [imp('src/a.ts', 'src/b.ts'), imp('src/b.ts', 'src/c.ts'), imp('src/c.ts', 'src/a.ts'), imp('src/c.ts', 'src/d.ts')];
    expect(cycles(loop)).toEqual([['src/a.ts', 'src/b.ts', 'src/c.ts']]);
  });

  RULES.forEach((rule, n) => {
    it(rule.name, () => {
      const broken = imports.filter((i) => rule.breaks(i)).map((i) => key(n, i));
      expect(broken.filter((b) => !ALLOWED.has(b))).toEqual([]);
    });
  });

  it('no import cycles', () => {
    const found = cycles().map((c) => c.join(' '));
    expect(found.filter((c) => !ALLOWED_CYCLES.has(c))).toEqual([]);
  });

  it('every allowed break still exists (a fixed one leaves the list)', () => {
    const now = new Set(RULES.flatMap((rule, n) => imports.filter((i) => rule.breaks(i)).map((i) => key(n, i))));
    expect([...ALLOWED].filter((a) => !now.has(a))).toEqual([]);
    const nowCycles = new Set(cycles().map((c) => c.join(' ')));
    expect([...ALLOWED_CYCLES].filter((c) => !nowCycles.has(c))).toEqual([]);
  });
});

// One way into each API (docs/architecture.md, "A request's path"): a route's descriptor names its
// caller (`auth`) and limits; the API's gate resolves the caller, in one place, before the handler.
const sources = files.filter((f) => f.startsWith('src/') && !isBrowser(f)).map((f) => ({ f, text: readFileSync(join(root, f), 'utf8') }));
const definesGate = (text: string) => /Gate<'\w+'>/.test(text);
// Reading a credential or its brand: an API key, a session cookie, a pixel key, a webhook URL's token, an admin JWT.
const CREDENTIAL_READS = /\bapiKeyOf\(req\)|\.brandIdFor\(|\.byToken\(|\.brandOf\(|\.findByToken\(|\bverifyAdminToken\(/;
// The admin gate is plumbing that route.ts imports (naming its Gate type would be a cycle).
const CREDENTIALS_OUTSIDE_GATES = new Set(['src/http/admin-auth.ts']);

describe('one way in (docs/architecture.md)', () => {
  it('no code reads the caller from the request: handlers are given it (no req.portal)', () => {
    expect(sources.filter(({ text }) => /\breq\.portal\b|portal\?: PortalSession/.test(text)).map(({ f }) => f)).toEqual([]);
  });

  it('credentials are read only by the gates that resolve callers, never in a handler', () => {
    const readers = sources.filter(({ f, text }) => CREDENTIAL_READS.test(text) && !definesGate(text) && !CREDENTIALS_OUTSIDE_GATES.has(f));
    expect(readers.map(({ f }) => f)).toEqual([]);
  });

  it('limits are named by routes, not applied by hooks keyed on a list of paths', () => {
    const hooked = sources.filter(({ f, text }) => f !== 'src/http/route.ts' && /addHook\('(onRequest|preHandler)'[\s\S]{0,400}?enforceRateLimit/.test(text));
    expect(hooked.map(({ f }) => f)).toEqual([]);
    expect(sources.filter(({ text }) => /addHook\('preHandler'/.test(text)).map(({ f }) => f)).toEqual([]);
  });

  it('a body is parsed once, by the descriptor: no handler parses its route body again', () => {
    const parsers = sources.filter(({ f, text }) => f !== 'src/http/route.ts' && !definesGate(text) && /\b(parseFields|bodyObject)\(/.test(text));
    expect(parsers.map(({ f }) => f)).toEqual([]);
    expect(sources.filter(({ text }) => /bodies: 'handler'/.test(text)).map(({ f }) => f)).toEqual([]);
  });

  it('one error type carries refusals: only src/refusal.ts defines an error with a status', () => {
    const others = sources.filter(({ f, text }) => f !== 'src/refusal.ts' && /class \w+ extends Error[\s\S]{0,300}?readonly status\b/.test(text));
    expect(others.map(({ f }) => f)).toEqual([]);
    expect(sources.filter(({ text }) => /\b(HttpError|WebhookRejection)\b/.test(text)).map(({ f }) => f)).toEqual([]);
  });
});
