// The npm mirror this project is built against lacks some platform-specific optional
// packages (macOS/Windows/Android builds of chdb, biome, msgpackr-extract), so `npm install`
// leaves them out of package-lock.json and `npm ci` then refuses the lock. This adds a
// lock entry for each missing optional platform package, with the os/cpu its name
// declares, so `npm ci` skips it on other platforms and fetches it by version where needed.
// Run after changing dependencies: node scripts/lock-optional-platforms.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const OS = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openbsd', 'sunos', 'aix', 'netbsd'];
const CPU = ['arm64', 'x64', 'arm', 'ia32', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el'];

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.find((p) => CPU.includes(p));
  if (!os || !cpu) return undefined;
  const entry = { os: [os], cpu: [cpu] };
  if (parts.includes('musl')) entry.libc = ['musl'];
  else if (parts.includes('gnu') || (os === 'linux' && parts.includes('glibc'))) entry.libc = ['glibc'];
  return entry;
}

let added = 0;
for (const [path, node] of Object.entries(lock.packages)) {
  for (const [dep, range] of Object.entries(node.optionalDependencies ?? {})) {
    const base = path ? `${path}/node_modules/${dep}` : `node_modules/${dep}`;
    if (lock.packages[base] || lock.packages[`node_modules/${dep}`]) continue;
    const platform = platformOf(dep);
    if (!platform) continue;
    lock.packages[`node_modules/${dep}`] = {
      version: range.replace(/^[\^~=]/, ''),
      ...(node.dev ? { dev: true } : {}),
      optional: true,
      ...platform,
    };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} optional platform entries`);
