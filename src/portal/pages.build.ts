import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Builds the portal's pages (src/portal/web) with esbuild into dist/portal/<hash>/, the hash
 * covering the sources, this file and the esbuild and uPlot versions: a changed source builds anew
 * at the next start. `npm ci` builds once (the `prepare` script).
 */
const WEB = fileURLToPath(new URL('./web/', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist/portal/', import.meta.url));
const require = createRequire(import.meta.url);

/** The built files by name (`index.html`, `app-<hash>.js`, `app-<hash>.css`). */
export type PortalFiles = Map<string, Buffer>;

export async function portalFiles(): Promise<PortalFiles> {
  const hash = await sourceHash();
  const dir = join(DIST, hash);
  const files = await readBuilt(dir);
  if (files) return files;
  await buildInto(dir);
  await removeOtherBuilds(hash);
  const built = await readBuilt(dir);
  if (!built) throw new Error(`the portal build in ${dir} could not be read`);
  return built;
}

async function sourceHash(): Promise<string> {
  const hash = createHash('sha256');
  const sources = (await readdir(WEB, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
  for (const file of [...sources, fileURLToPath(import.meta.url)]) {
    hash.update(relative(WEB, file)).update('\0').update(await readFile(file)).update('\0');
  }
  for (const pkg of ['esbuild', 'uplot']) hash.update(`${pkg}@${require(`${pkg}/package.json`).version}\0`);
  return hash.digest('hex').slice(0, 16);
}

/** The built files, or null when that build is missing (or was removed while being read: it is built again). */
async function readBuilt(dir: string): Promise<PortalFiles | null> {
  try {
    const names = await readdir(dir);
    if (!names.includes('index.html')) return null;
    return new Map(await Promise.all(names.map(async (n) => [n, await readFile(join(dir, n))] as const)));
  } catch {
    return null;
  }
}

/** Builds into a private folder, then renames it into place: processes starting together never read half a build. */
async function buildInto(dir: string): Promise<void> {
  const { build } = await import('esbuild');
  const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  await mkdir(tmp, { recursive: true });
  try {
    const result = await build({
      entryPoints: { app: join(WEB, 'main.ts') },
      bundle: true,
      minify: true,
      format: 'esm',
      target: 'es2022',
      outdir: tmp,
      entryNames: '[name]-[hash]',
      metafile: true,
      logLevel: 'silent',
      tsconfig: join(WEB, 'tsconfig.json'),
    });
    const outputs = Object.keys(result.metafile.outputs).map((p) => p.split('/').pop()!);
    const js = outputs.find((n) => n.endsWith('.js'));
    const css = outputs.find((n) => n.endsWith('.css'));
    if (!js || !css) throw new Error(`portal build produced ${outputs.join(', ')}`);
    const html = (await readFile(join(WEB, 'index.html'), 'utf8')).replace('{{app.js}}', `/portal/assets/${js}`).replace('{{app.css}}', `/portal/assets/${css}`);
    await writeFile(join(tmp, 'index.html'), html);
    await rename(tmp, dir);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    // Another process that built the same sources got there first.
    if ((err as NodeJS.ErrnoException).code === 'ENOTEMPTY' || (err as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw err;
  }
}

async function removeOtherBuilds(keep: string): Promise<void> {
  for (const name of await readdir(DIST).catch(() => [] as string[])) {
    if (name !== keep && !name.includes('.tmp-')) await rm(join(DIST, name), { recursive: true, force: true });
  }
}

// `node --import tsx src/portal/pages.build.ts`: the `prepare` script of package.json.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const files = await portalFiles();
  console.log(`portal pages built: ${[...files.keys()].join(', ')} in ${DIST}`);
}
