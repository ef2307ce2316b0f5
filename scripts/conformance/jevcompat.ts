/**
 * `npm run conformance:jevcompat [-- --json report.json]`: runs the community's System One conformance
 * suite, jevcompat (PyPI, MIT, not written by this project), against a Brier server on the embedded
 * engine, and prints its summary line.
 *
 * - Python: jevcompat is installed into a throwaway virtual environment (`python3 -m venv` in a temp
 *   folder, removed afterwards); nothing is installed on the machine itself. Where python3 (or its venv
 *   module) is missing the run is skipped with a message and exits 0, unless JEVCOMPAT_REQUIRED=1 (CI),
 *   where a skip is a failure.
 * - The server: `node src/main.ts` on loopback, a temp SQLite database, the embedded engine, one key
 *   created through the CLI (so the suite's auth checks run too).
 * - Exit status: 0 when jevcompat says "conformant" and no requirement failed, MUST or SHOULD; 1
 *   otherwise. The suite's own TypeScript mirror is test/conformance/jevcompat.test.ts, which
 *   `npm test` runs without Python.
 *
 * JEVCOMPAT_VERSION pins the suite's version (default JEVCOMPAT_DEFAULT_VERSION, the one the summary
 * lines in docs/guide/compatibility.md were measured with).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type RunningServer, startServer, waitHealthy } from '../../test/server.ts';

const JEVCOMPAT_DEFAULT_VERSION = '0.1.1';

const { values } = parseArgs({ options: { json: { type: 'string' } } });
const version = process.env.JEVCOMPAT_VERSION ?? JEVCOMPAT_DEFAULT_VERSION;
const required = process.env.JEVCOMPAT_REQUIRED === '1';

/** Ends the run without testing anything: exit 0 with a message, or 1 where a run is required. */
function skip(why: string): never {
  console.log(`# jevcompat skipped: ${why}`);
  process.exit(required ? 1 : 0);
}

/** Runs a command to its end, its output passed through; resolves with the exit status. */
function run(command: string, args: string[], options: { env?: NodeJS.ProcessEnv } = {}): Promise<number | null> {
  const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'], env: options.env ?? process.env });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
}

const python = spawnSync('python3', ['-c', 'import sys, venv, ensurepip; print(sys.version.split()[0])'], {
  encoding: 'utf8',
});
if (python.error) skip('python3 is not installed (jevcompat is a Python package); npm test covers the same checks');
if (python.status !== 0) {
  skip(
    `python3 cannot create a virtual environment (install python3-venv): ${python.stderr.trim().split('\n').at(-1)}`,
  );
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-jevcompat-'));
let server: RunningServer | undefined;
try {
  const venv = path.join(tmp, 'venv');
  console.log(`# python ${python.stdout.trim()}; jevcompat ${version} into a throwaway venv (${venv})`);
  if ((await run('python3', ['-m', 'venv', venv])) !== 0) throw new Error('python3 -m venv failed');
  const pip = await run(path.join(venv, 'bin', 'pip'), [
    'install',
    '--quiet',
    '--disable-pip-version-check',
    `jevcompat==${version}`,
  ]);
  if (pip !== 0) throw new Error(`pip install jevcompat==${version} failed (exit ${pip}); is PyPI reachable?`);

  server = await startServer({ BRIER_THREADS: '1' });
  await waitHealthy(server.url);
  const key = await server.createKey('jevcompat@example.com');
  console.log(`# Brier on ${server.url} (embedded engine, temp SQLite, one key)`);

  const report = values.json ? path.resolve(values.json) : path.join(tmp, 'report.json');
  const status = await run(
    path.join(venv, 'bin', 'jevcompat'),
    ['test', server.url, '--key-env', 'BRIER_KEY', '--json', report],
    {
      env: { ...process.env, BRIER_KEY: key, NO_COLOR: '1' },
    },
  );
  const summary = readSummary(report);
  console.log(`\njevcompat ${version}: ${summary.line} (exit ${status})`);
  process.exitCode = summary.clean && status === 0 ? 0 : 1;
} finally {
  await server?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
  tested: number;
}

/** The report's counts as one line (`conformant: MUST 32/32, SHOULD 15/15 (...)`), and whether nothing failed. */
function readSummary(file: string): { line: string; clean: boolean } {
  const report = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    summary: { verdict: string; MUST: Counts; SHOULD: Counts };
    results: { id: string; level: string; status: string }[];
  };
  const { verdict, MUST, SHOULD } = report.summary;
  const failed = report.results.filter((r) => r.status === 'fail').map((r) => r.id);
  const skipped = report.results.filter((r) => r.status === 'skip').map((r) => r.id);
  const parts = [
    failed.length > 0 ? `failed: ${failed.join(', ')}` : '',
    skipped.length > 0 ? `skipped: ${skipped.join(', ')}` : '',
  ].filter(Boolean);
  const line = `${verdict}: MUST ${MUST.passed}/${MUST.tested}, SHOULD ${SHOULD.passed}/${SHOULD.tested}${parts.length ? ` (${parts.join('; ')})` : ''}`;
  return { line, clean: verdict === 'conformant' && MUST.failed === 0 && SHOULD.failed === 0 };
}
