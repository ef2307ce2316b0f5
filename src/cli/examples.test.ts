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
    const up = await run('upload', '--email', 'cli@example.com', '--create-account', file);
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

  test('an email with no account is refused, nothing stored and no account created, unless --create-account', async () => {
    const file = path.join(dir, 'one.jsonl');
    fs.writeFileSync(file, jsonl([row('crash', { team: ROUTING }, { team: 'tech' })]));
    const typo = await run('upload', '--email', 'cli@exmaple.com', file);
    assert.equal(typo.code, 1);
    assert.deepEqual(typo.out, []);
    assert.equal(
      typo.err.join('\n'),
      'no account has the email cli@exmaple.com: nothing was stored. Check the address, or add --create-account to create its account',
    );
    const list = await run('list', '--email', 'cli@exmaple.com');
    assert.equal(list.code, 1, 'listing does not create the account either');
    assert.match(list.err.join('\n'), /^no account has the email cli@exmaple\.com: check the address$/);
    const created = await run('upload', '--email', 'cli@exmaple.com', '--create-account', file);
    assert.equal(created.code, 0, created.err.join('\n'));
    assert.match(created.out.join('\n'), /^Stored 1 labelled question from 1 row \(1 template\) for cli@exmaple\.com/);
  });

  test('a file uploaded again stores nothing and says how many rows were duplicates', async () => {
    const file = path.join(dir, 'again.jsonl');
    fs.writeFileSync(
      file,
      jsonl([
        row('charged twice', { team: ROUTING, refund: REFUND }, { team: 'billing', refund: true }),
        row('crash', { team: ROUTING }, { team: 'tech' }),
      ]),
    );
    assert.equal((await run('upload', '--email', 'cli3@example.com', '--create-account', file)).code, 0);
    const again = await run('upload', '--email', 'cli3@example.com', file);
    assert.equal(again.code, 0, again.err.join('\n'));
    assert.match(
      again.out.join('\n'),
      /^Stored 0 labelled questions from 2 rows \(2 templates\), skipped 3 duplicates of earlier uploads for cli3@example\.com; the account has 3\.$/,
    );
  });

  test('an invalid row refuses the whole file, naming the line and field; nothing is stored', async () => {
    const file = path.join(dir, 'bad.jsonl');
    fs.writeFileSync(
      file,
      jsonl([row('ok', { refund: REFUND }, { refund: false }), row('bad', { team: ROUTING }, { team: 'nobody' })]),
    );
    const up = await run('upload', '--email', 'cli2@example.com', '--create-account', file);
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
