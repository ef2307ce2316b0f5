/**
 * Completes package-lock.json for `npm ci` on this project's registry.
 *
 * Why: the registry these machines reach serves only the platform packages of some optional
 * dependencies (no Windows, macOS or Android builds of biome and node-llama-cpp). `npm install`
 * then leaves those optional packages out of the lock, and `npm ci` refuses the lock as out of
 * sync ("Missing: @biomejs/cli-win32-x64@ from lock file"). Each missing optional dependency gets
 * an entry carrying its os/cpu/libc constraints, so that `npm ci` accepts the lock and skips it on
 * this platform exactly as it would with a full registry.
 *
 * Run after changing dependencies: `node scripts/complete-lock.ts` (idempotent).
 */
import fs from 'node:fs';

type Entry = { version?: string; optionalDependencies?: Record<string, string>; [k: string]: unknown };
const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(fs.readFileSync(file, 'utf8')) as { packages: Record<string, Entry> };

/** os, cpu and libc implied by a platform package's name suffix (biome, node-llama-cpp, rollup naming). */
const OS: [string, string][] = [
  ['win32', 'win32'],
  ['win-', 'win32'],
  ['darwin', 'darwin'],
  ['mac-', 'darwin'],
  ['android', 'android'],
  ['freebsd', 'freebsd'],
  ['openbsd', 'openbsd'],
  ['netbsd', 'netbsd'],
  ['openharmony', 'openharmony'],
  ['sunos', 'sunos'],
  ['aix', 'aix'],
  ['linux', 'linux'],
];
const CPU: [string, string][] = [
  ['arm64', 'arm64'],
  ['armv7l', 'arm'],
  ['arm-', 'arm'],
  ['riscv64', 'riscv64'],
  ['loong64', 'loong64'],
  ['ppc64', 'ppc64'],
  ['s390x', 's390x'],
  ['ia32', 'ia32'],
  ['x64', 'x64'],
];
function platform(name: string): { os: string[]; cpu: string[]; libc?: string[] } | undefined {
  const suffix = `${name.split('/').pop() ?? ''}-`;
  const os = OS.find(([p]) => suffix.includes(p))?.[1];
  const cpu = CPU.find(([p]) => suffix.includes(p))?.[1];
  if (!os || !cpu) return undefined;
  return { os: [os], cpu: [cpu], ...(suffix.includes('-musl') ? { libc: ['musl'] } : {}) };
}

let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [dep, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const at = `${path ? `${path}/` : ''}node_modules/${dep}`;
    if (lock.packages[at] || lock.packages[`node_modules/${dep}`]) continue;
    const p = platform(dep);
    if (!p) continue;
    lock.packages[`node_modules/${dep}`] = { version: range.replace(/^[\^~=]/, ''), optional: true, ...p };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: ${added} missing optional platform entries added`);
