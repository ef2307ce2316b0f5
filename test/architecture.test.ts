/**
 * The layout's import direction (README, "Architecture"): each top-level part of src/ may import only
 * the parts listed for it, the list has no cycle, and serving never imports training. Test files are
 * free to import across (a test of one part may build its inputs with another).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ROOT } from './server.ts';

const SRC = path.join(ROOT, 'src');

/** What each part may import (besides itself and npm packages). Order: from the bottom up. */
export const ALLOWED: Record<string, readonly string[]> = {
  lib: [],
  'config.ts': ['lib'],
  catalog: ['lib'],
  engines: ['lib', 'catalog', 'config.ts'],
  systemone: ['lib', 'engines'],
  training: ['lib', 'catalog', 'engines', 'systemone'],
  observability: ['lib', 'engines'],
  mail: ['lib', 'observability'],
  db: ['lib', 'observability'],
  domain: ['lib', 'db', 'systemone'],
  auth: ['lib', 'config.ts', 'db', 'mail', 'observability'],
  http: ['lib', 'auth', 'db', 'domain', 'engines', 'observability', 'systemone'],
  routes: ['lib', 'auth', 'db', 'domain', 'engines', 'http', 'observability', 'systemone'],
  'app.ts': ['lib', 'auth', 'db', 'domain', 'engines', 'http', 'observability', 'routes', 'systemone'],
  // The adapter training job runner; it starts src/training/adapter-worker.ts as a child process by path
  // (the fitting runs there), so serving never imports training.
  jobs: ['lib', 'db', 'domain', 'engines', 'observability', 'systemone'],
  'services.ts': [
    'lib',
    'app.ts',
    'auth',
    'config.ts',
    'db',
    'domain',
    'engines',
    'http',
    'jobs',
    'mail',
    'observability',
    'routes',
    'systemone',
  ],
  worker: ['lib', 'engines', 'http', 'observability', 'routes'],
  'main.ts': ['lib', 'config.ts', 'db', 'engines', 'http', 'observability', 'services.ts', 'worker'],
  // (`models calibrate` runs an engine and fits its calibration: the CLI is not serving)
  cli: ['lib', 'catalog', 'config.ts', 'db', 'domain', 'engines', 'systemone', 'training'],
  'cli.ts': ['lib', 'catalog', 'cli', 'config.ts'],
};

/** Serving: the parts that answer requests. None may reach training, directly or through another part. */
const SERVING = ['engines', 'systemone', 'http', 'routes', 'app.ts', 'services.ts', 'main.ts', 'worker', 'jobs'];

function part(file: string): string {
  return path.relative(SRC, file).split(path.sep)[0] ?? '';
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [full] : [];
  });
}

/** Relative imports of a file (static, dynamic and type-only), as absolute paths. */
export function importsOf(file: string, text = fs.readFileSync(file, 'utf8')): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
    out.push(path.resolve(path.dirname(file), m[1] ?? ''));
  }
  return out;
}

/** Every import from one part of src/ into another that ALLOWED does not list, as "file -> target". */
export function violations(files: string[], read: (file: string) => string): string[] {
  const out: string[] = [];
  for (const file of files) {
    const from = part(file);
    for (const target of importsOf(file, read(file))) {
      if (!target.startsWith(SRC + path.sep)) continue;
      const to = part(target);
      if (to === from) continue;
      if (!(ALLOWED[from] ?? []).includes(to))
        out.push(`${path.relative(ROOT, file)} -> ${path.relative(ROOT, target)}`);
    }
  }
  return out;
}

describe('architecture: the import direction', () => {
  test('every import between parts of src/ goes the documented way', () => {
    const files = sourceFiles(SRC);
    for (const file of files)
      assert.ok(part(file) in ALLOWED, `${path.relative(ROOT, file)}: a part ALLOWED does not list`);
    assert.deepEqual(
      violations(files, (f) => fs.readFileSync(f, 'utf8')),
      [],
    );
  });

  test('the allowed directions have no cycle, and serving never reaches training', () => {
    const reach = (from: string, seen = new Set<string>()): Set<string> => {
      for (const to of ALLOWED[from] ?? []) {
        if (!seen.has(to)) {
          seen.add(to);
          reach(to, seen);
        }
      }
      return seen;
    };
    for (const from of Object.keys(ALLOWED)) assert.ok(!reach(from).has(from), `${from} can reach itself`);
    for (const from of SERVING) assert.ok(!reach(from).has('training'), `${from} can reach training`);
  });

  test('an import against the direction is caught', () => {
    const engineFile = path.join(SRC, 'engines', 'example.ts');
    const bad = (text: string) => violations([engineFile], () => text);
    assert.deepEqual(bad("import { serve } from '../systemone/serve.ts';"), [
      'src/engines/example.ts -> src/systemone/serve.ts',
    ]);
    assert.deepEqual(bad("const t = await import('../training/train.ts');"), [
      'src/engines/example.ts -> src/training/train.ts',
    ]);
    assert.deepEqual(bad("import type { X } from '../lib/errors.ts';"), []);
  });
});
