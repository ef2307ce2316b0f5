/**
 * `npm start`'s prestart: builds the web console (dist/console) and the documentation site
 * (dist/docs) when either is missing, so that the README's two commands (`npm ci && npm start`) give
 * a working /console and /docs. Does nothing for a site that is already built. A failed build never
 * stops the start: the API starts anyway, and the unbuilt site answers a 503 page saying how to build it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface Site {
  /** What the messages call it. */
  name: string;
  /** The file whose presence means the site is built. */
  index: string;
  /** The npm script that builds it. */
  script: string;
  /** Where the server serves it. */
  path: string;
}

export const SITES: readonly Site[] = [
  {
    name: 'console',
    index: fileURLToPath(new URL('../dist/console/index.html', import.meta.url)),
    script: 'build:console',
    path: '/console',
  },
  {
    name: 'documentation site',
    index: fileURLToPath(new URL('../dist/docs/index.html', import.meta.url)),
    script: 'build:docs',
    path: '/docs',
  },
];

export interface EnsureBuiltDeps {
  exists: (file: string) => boolean;
  /** Runs an npm script; answers its exit status (null when it could not run). */
  run: (script: string) => number | null;
  log: (line: string) => void;
}

export interface EnsureBuiltResult {
  built: string[];
  failed: string[];
}

/** Builds every site whose index is missing, one after the other; never throws for a failed build. */
export function ensureBuilt(sites: readonly Site[], deps: EnsureBuiltDeps): EnsureBuiltResult {
  const result: EnsureBuiltResult = { built: [], failed: [] };
  for (const site of sites) {
    if (deps.exists(site.index)) continue;
    deps.log(`brier: the ${site.name} is not built yet: building it (npm run ${site.script})`);
    let status: number | null;
    try {
      status = deps.run(site.script);
    } catch {
      status = null;
    }
    if (status === 0 && deps.exists(site.index)) {
      result.built.push(site.name);
    } else {
      result.failed.push(site.name);
      deps.log(
        `brier: the ${site.name} build FAILED (see the output above); the API starts anyway, and ${site.path} answers 503 until \`npm run ${site.script}\` succeeds`,
      );
    }
  }
  return result;
}

if (import.meta.main) {
  ensureBuilt(SITES, {
    exists: (file) => fs.existsSync(file),
    run: (script) => spawnSync('npm', ['run', '-s', script], { stdio: 'inherit' }).status,
    log: (line) => console.error(line),
  });
}
