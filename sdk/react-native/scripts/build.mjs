// Builds dist/ (ES module + type declarations) with the repository's TypeScript, then writes the
// deployment's public URL into DEFAULT_ENDPOINT when PUBLIC_BASE_URL is set (npm pack runs this).
// So every entry of package.json, Metro's included, must point at dist/: src/ keeps the local default.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// The package has no dependencies of its own: it borrows the TypeScript of the repository it lives in.
const tsc = join(root, '../../node_modules/typescript/bin/tsc');
if (!existsSync(tsc)) throw new Error(`TypeScript not found at ${tsc}: run npm ci at the repository root`);

rmSync(join(root, 'dist'), { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { stdio: 'inherit' });

const base = process.env.PUBLIC_BASE_URL?.trim();
if (base) {
  const url = new URL(base);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`PUBLIC_BASE_URL must be http(s): ${base}`);
  const endpoint = base.replace(/\/+$/, '');
  const file = join(root, 'dist/index.js');
  const js = readFileSync(file, 'utf8');
  const declaration = /export const DEFAULT_ENDPOINT = (["'])[^"']*\1;/;
  if (!declaration.test(js)) throw new Error('DEFAULT_ENDPOINT declaration not found in dist/index.js');
  writeFileSync(file, js.replace(declaration, `export const DEFAULT_ENDPOINT = ${JSON.stringify(endpoint)};`));
  console.log(`DEFAULT_ENDPOINT = ${endpoint}`);
}
