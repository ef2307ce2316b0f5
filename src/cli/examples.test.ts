import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { jsonl, REFUND, ROUTING, row } from '../../test/fixtures/teach.ts';
import { loadConfig } from '../config.ts';
import { runExamplesCommand } from './examples.ts';

describe('brier examples (CLI)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-cli-examples-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const config = loadConfig({ DATABASE_URL: `file:${path.join(dir, 'db.sqlite')}`, BRIER_DATA_DIR: dir });

  async function run(...argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runExamplesCommand(argv, config, { stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
    return { code, out, err };
  }

  test('uploads a JSON Lines file to an account and lists its templates', async () => {
    const file = path.join(dir, 'good.jsonl');
    fs.writeFileSync(
      file,
      jsonl([
        row('charged twice', { team: ROUTING, refund: REFUND }, { team: 'billing', refund: true }),
        row('crash', { team: ROUTING }, { team: 'tech' }),
      ]),
    );
    const up = await run('upload', '--email', 'cli@example.com', file);
    assert.equal(up.code, 0, up.err.join('\n'));
    assert.match(
      up.out.join('\n'),
      /Stored 3 labelled questions from 2 rows \(2 templates\) for cli@example\.com; the account has 3\./,
    );
    const list = await run('list', '--email', 'cli@example.com');
    assert.equal(list.code, 0);
    assert.match(
      list.out.join('\n'),
      /tpl_\w+\tchoice\t2 examples \(0 outcomes\)\tWhich team should handle this ticket\?/,
    );
    assert.match(list.out.at(-1) ?? '', /^3 labelled questions in 2 templates$/);
  });

  test('an invalid row refuses the whole file, naming the line and field; nothing is stored', async () => {
    const file = path.join(dir, 'bad.jsonl');
    fs.writeFileSync(
      file,
      jsonl([row('ok', { refund: REFUND }, { refund: false }), row('bad', { team: ROUTING }, { team: 'nobody' })]),
    );
    const up = await run('upload', '--email', 'cli2@example.com', file);
    assert.equal(up.code, 1);
    assert.match(up.err.join('\n'), /1 of 2 rows are invalid; nothing was stored/);
    assert.match(up.err.join('\n'), /line 2: labels\.team: must be one of the question's labels/);
    const list = await run('list', '--email', 'cli2@example.com');
    assert.match(list.out.at(-1) ?? '', /^0 labelled questions in 0 templates$/);
  });

  test('usage errors exit 2', async () => {
    assert.equal((await run('upload', '--email', 'x@example.com')).code, 2);
    assert.equal((await run('nope', '--email', 'x@example.com')).code, 2);
  });
});
