import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The repository stands on its own: no file cites a document a clone does not have, and every
// `<file>.md#anchor` a comment or a page cites names a heading that exists.

const root = resolve(import.meta.dirname, '..');
const TEXT = new Set(['.ts', '.mjs', '.js', '.cjs', '.md', '.sql', '.css', '.html', '.json', '.yml', '.yaml', '.sh', '.txt', '']);
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'coverage']);
// Swift sources are left as they are (no Swift toolchain here to check a change).
const exempt = (file: string) => (file.startsWith('sdk/ios/') && file.endsWith('.swift')) || file.endsWith('Package.swift') || file === 'package-lock.json';

function walk(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    if (SKIP_DIRS.has(name)) return [];
    const path = dir ? `${dir}/${name}` : name;
    return statSync(join(root, path)).isDirectory() ? walk(path) : [path];
  });
}

/** The repository's files: git's list (tracked and new, ignored ones left out), else the tree. */
function repositoryFiles(): string[] {
  let files: string[];
  try {
    const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' });
    files = listed.split('\n').filter((f) => f && existsSync(join(root, f)));
  } catch {
    files = walk('');
  }
  return files.filter((f) => !exempt(f) && TEXT.has(extname(f)) && !f.split('/').some((part) => SKIP_DIRS.has(part)));
}

const files = repositoryFiles();
const text = new Map(files.map((f) => [f, readFileSync(join(root, f), 'utf8')]));

// Built from pieces so that this file does not cite them itself.
const OUTSIDE = [
  ['..', 'shared'].join('/'),
  ['SPEC', 'md'].join('.'),
  ['CONTRACT', 'md'].join('.'),
  ['PROVIDERS', 'md'].join('.'),
];
const SECTION = new RegExp(`\\b(?:${'SPEC'}|${'CONTRACT'})(?: section)? \\d+(?:\\.\\d+)?\\b`);
// An issue or one of its items (`issue 19`, `issue 19, item 6`): trackers are not part of a clone.
const ISSUE_ITEM = new RegExp(`\\b${'issue'}s? #?\\d+`, 'i');

/** GitHub's anchor of a heading: lower case, inline code and links reduced to their text, punctuation dropped, spaces as `-`. */
function headingAnchor(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a Markdown file offers: its headings outside code fences (repeats get -1, -2…). */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const opens = /^\s*(```|~~~)/.exec(line);
    if (opens) {
      if (fence === null) fence = opens[1] as string;
      else if (line.trim().startsWith(fence)) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = headingAnchor(heading[1] as string);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

// `docs/api.md#data-api`, `api.md#data-api` (beside the citing page), `README.md#configuration`,
// `(#totals)` within a page. URLs to other sites are not ours to check.
const CITED = /(?<![\w/.:-])((?:\.{1,2}\/)*(?:[\w.-]+\/)*[\w.-]+\.md)#([\w-]+)/g;
const LOCAL = /\]\(#([\w-]+)\)/g;

function resolveCited(from: string, target: string): string | null {
  const candidates = [relative(root, resolve(root, dirname(from), target)), relative(root, resolve(root, target))];
  return candidates.find((c) => text.has(c) || existsSync(join(root, c))) ?? null;
}

describe('references in the repository', () => {
  it('finds the files it checks', () => {
    expect(files).toContain('README.md');
    expect(files).toContain('docs/api.md');
    expect(files.some((f) => f.startsWith('src/'))).toBe(true);
  });

  it('cites no document outside the repository, no section of one and no issue', () => {
    const found: string[] = [];
    for (const [file, body] of text) {
      if (file === 'test/docs-references.test.ts') continue;
      body.split('\n').forEach((line, i) => {
        const hit = OUTSIDE.find((o) => line.includes(o)) ?? SECTION.exec(line)?.[0] ?? ISSUE_ITEM.exec(line)?.[0];
        if (hit) found.push(`${file}:${i + 1}: ${hit}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('cites only headings that exist', () => {
    const anchors = new Map<string, Set<string>>();
    const anchorsIn = (file: string) => {
      let known = anchors.get(file);
      if (!known) {
        known = anchorsOf(text.get(file) ?? readFileSync(join(root, file), 'utf8'));
        anchors.set(file, known);
      }
      return known;
    };
    const broken: string[] = [];
    let checked = 0;
    for (const [file, body] of text) {
      if (file === 'test/docs-references.test.ts') continue;
      for (const m of body.matchAll(CITED)) {
        const [cited, target, anchor] = m as unknown as [string, string, string];
        const page = resolveCited(file, target);
        checked++;
        if (!page) broken.push(`${file}: ${cited} (no such file)`);
        else if (!anchorsIn(page).has(anchor)) broken.push(`${file}: ${cited} (no such heading in ${page})`);
      }
      if (file.endsWith('.md')) {
        for (const m of body.matchAll(LOCAL)) {
          checked++;
          if (!anchorsIn(file).has(m[1] as string)) broken.push(`${file}: #${m[1]} (no such heading)`);
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(broken).toEqual([]);
  });

  it('reads anchors as GitHub writes them', () => {
    expect(headingAnchor('Endpoints (`/api/client/attribution`)')).toBe('endpoints-apiclientattribution');
    expect(headingAnchor("Who may name a click's IP")).toBe('who-may-name-a-clicks-ip');
    expect(headingAnchor('Bodies over a limit: 413 and a lingering close')).toBe('bodies-over-a-limit-413-and-a-lingering-close');
    expect([...anchorsOf('# A\n```sh\n# not a heading\n```\n## B c\n## B c\n')]).toEqual(['a', 'b-c', 'b-c-1']);
  });
});
