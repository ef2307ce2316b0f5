import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ensureBuilt, SITES, type Site } from '../../console/ensure-built.ts';
import { ROOT, type RunningServer, startServer, waitHealthy } from '../server.ts';

/** The quickstart's curl request body and the sample response printed after it. */
function quickstartSample(): { request: unknown; response: unknown } {
  const md = fs.readFileSync(path.join(ROOT, 'docs', 'guide', 'quickstart.md'), 'utf8');
  const curl = /```sh\n(curl -s "\$BRIER_URL\/v1\/systemone"[\s\S]*?)```/.exec(md);
  const data = /-d '([\s\S]*?)'\n/.exec(curl?.[1] ?? '');
  assert.ok(data?.[1], 'the quickstart has a curl call with -d');
  const after = md.slice((curl?.index ?? 0) + (curl?.[0].length ?? 0));
  const json = /```json\n([\s\S]*?)```/.exec(after);
  assert.ok(json?.[1], 'a JSON sample response follows the curl call');
  return { request: JSON.parse(data[1]), response: JSON.parse(json[1]) };
}

describe('npm start defaults: embedded brier-lite on SQLite', () => {
  let server: RunningServer;
  let auth: Record<string, string>;
  before(async () => {
    server = await startServer({});
    await waitHealthy(server.url);
    const key = await server.createKey('default@example.com');
    auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  });
  after(async () => {
    await server?.stop();
  });

  test('answers with no BRIER_MODEL and no download', async () => {
    const models = await (await fetch(`${server.url}/v1/models`, { headers: auth })).json();
    assert.equal(models.models[0].id, 'brier-lite-4.2.0');
    const res = await fetch(`${server.url}/v1/systemone`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        state: 'I was charged twice for my subscription. Please refund one.',
        questions: {
          team: {
            type: 'choice',
            instructions: 'Which team should handle this?',
            criteria: { billing: 'charges and refunds', tech: 'bugs and outages' },
          },
          refund: { type: 'noul', instructions: 'Is the customer asking for money back?' },
        },
      }),
    });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.model, 'brier-lite-4.2.0');
    assert.equal(body.answers.team.type, 'choice');
    assert.ok(body.usage.input_tokens > 0);
  });

  test("the docs quickstart's sample response is what the embedded model answers to its curl request", async () => {
    const { request, response } = quickstartSample();
    const res = await fetch(`${server.url}/v1/systemone`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify(request),
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), response);
  });
});

/** The two sites in a temp dir, with a fake `npm run` that "builds" by writing the index (or fails). */
function fakeSites(fail: string[] = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-prestart-'));
  const sites: Site[] = SITES.map((s) => ({ ...s, index: path.join(dir, s.script, 'index.html') }));
  const runs: string[] = [];
  const lines: string[] = [];
  const deps = {
    exists: (file: string) => fs.existsSync(file),
    run: (script: string) => {
      runs.push(script);
      if (fail.includes(script)) return 1;
      fs.mkdirSync(path.join(dir, script), { recursive: true });
      fs.writeFileSync(path.join(dir, script, 'index.html'), '<!doctype html>');
      return 0;
    },
    log: (line: string) => lines.push(line),
  };
  return { dir, sites, runs, lines, deps };
}

test('npm start builds what is missing: the console and the docs, and nothing already built', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  assert.equal(pkg.scripts.prestart, 'node console/ensure-built.ts');
  assert.deepEqual(
    SITES.map((s) => [s.script, path.relative(ROOT, s.index)]),
    [
      ['build:console', path.join('dist', 'console', 'index.html')],
      ['build:docs', path.join('dist', 'docs', 'index.html')],
    ],
  );
  for (const s of SITES) assert.ok(pkg.scripts[s.script], `npm run ${s.script} exists`);

  const fresh = fakeSites();
  try {
    assert.deepEqual(ensureBuilt(fresh.sites, fresh.deps), { built: ['console', 'documentation site'], failed: [] });
    assert.deepEqual(fresh.runs, ['build:console', 'build:docs']);
    // A second start finds both built and builds nothing.
    fresh.runs.length = 0;
    assert.deepEqual(ensureBuilt(fresh.sites, fresh.deps), { built: [], failed: [] });
    assert.deepEqual(fresh.runs, []);
  } finally {
    fs.rmSync(fresh.dir, { recursive: true, force: true });
  }
});

test('a failed docs build still lets npm start go on, with a message naming the site and the fix', () => {
  const f = fakeSites(['build:docs']);
  try {
    assert.deepEqual(ensureBuilt(f.sites, f.deps), { built: ['console'], failed: ['documentation site'] });
    const message = f.lines.find((l) => l.includes('FAILED')) ?? '';
    assert.match(message, /documentation site build FAILED/);
    assert.match(message, /the API starts anyway/);
    assert.match(message, /\/docs answers 503 until `npm run build:docs` succeeds/);
  } finally {
    fs.rmSync(f.dir, { recursive: true, force: true });
  }
  // The script itself, in a copy of the repository with nothing built and no npm to build with: it
  // says what failed and exits 0 (npm runs `start` only after a prestart that exits 0).
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-prestart-script-'));
  try {
    fs.mkdirSync(path.join(copy, 'console'));
    fs.copyFileSync(path.join(ROOT, 'console', 'ensure-built.ts'), path.join(copy, 'console', 'ensure-built.ts'));
    fs.writeFileSync(path.join(copy, 'package.json'), '{"type":"module"}');
    const script = spawnSync(process.execPath, ['console/ensure-built.ts'], {
      cwd: copy,
      env: { PATH: '' },
      encoding: 'utf8',
    });
    assert.equal(script.status, 0, script.stderr);
    assert.match(script.stderr, /the console build FAILED.*the API starts anyway/);
    assert.match(script.stderr, /the documentation site build FAILED.*\/docs answers 503/);
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
});
