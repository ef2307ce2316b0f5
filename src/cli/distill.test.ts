import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { loadConfig } from '../config.ts';
import { migrate } from '../db/migrate.ts';
import { openDb } from '../db/open.ts';
import { createAccountService } from '../domain/accounts.ts';
import { createJobQueue } from '../domain/jobs.ts';
import { runDistillCommand } from './distill.ts';

describe('brier distill (CLI)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-cli-distill-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const url = `file:${path.join(dir, 'db.sqlite')}`;
  const config = loadConfig({
    DATABASE_URL: url,
    BRIER_DATA_DIR: dir,
    BRIER_TEACHERS: JSON.stringify([{ id: 'jev', model: 'http://127.0.0.1:9', api_key_env: 'JEV_KEY' }]),
    JEV_KEY: 'sk-cli-teacher-key-never-printed',
  });

  async function run(...argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runDistillCommand(argv, config, { stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
    return { code, out, err };
  }

  test('lists teachers without their keys, stores states, shows the call budget, then queues the job', async () => {
    const teachers = await run('teachers');
    assert.equal(teachers.code, 0);
    assert.deepEqual(teachers.out, ['jev\tsystemone\tconcurrency 4', '1 teachers']);
    const states = path.join(dir, 'states.jsonl');
    fs.writeFileSync(states, Array.from({ length: 25 }, (_, i) => JSON.stringify({ state: `ticket ${i}` })).join('\n'));
    const stored = await run('states', '--email', 'cli-distill@example.com', states);
    assert.equal(stored.code, 0, stored.err.join('\n'));
    assert.equal(stored.out[0], 'stored 25 unlabelled states; the account has 25');
    const questions = path.join(dir, 'questions.json');
    fs.writeFileSync(questions, JSON.stringify({ refund: { type: 'noul', instructions: 'Refund?' } }));
    const args = ['start', '--email', 'cli-distill@example.com', '--teacher', 'jev', '--questions', questions];
    const dry = await run(...args, '--dry-run', '--budget', '20');
    assert.equal(dry.code, 0, dry.err.join('\n'));
    assert.equal(
      dry.out[0],
      '25 states (0 already labelled by jev), 1 template: 20 teacher calls (budget 20), 20 questions at most',
    );
    assert.equal(dry.out.length, 1, 'nothing queued');
    const started = await run(...args, '--fallback', '0.4');
    assert.equal(started.code, 0, started.err.join('\n'));
    assert.match(started.out[1] ?? '', /^job_\w+ queued/);
    const db = await openDb(url);
    await migrate(db);
    const user = await createAccountService(db).ensure('cli-distill@example.com');
    const [job] = await createJobQueue(db).list(user.id);
    await db.close();
    assert.ok(job);
    assert.equal(job.kind, 'distill');
    assert.equal((job.spec as { fallbackThreshold: number }).fallbackThreshold, 0.4);
    assert.ok(![...teachers.out, ...dry.out, ...started.out].join('').includes('sk-cli-teacher'));
  });

  test('refusals name the option: an unknown teacher, a bad budget, too few states', async () => {
    const unknown = await run('start', '--email', 'a@example.com', '--teacher', 'gpt', '--questions', 'x.json');
    assert.equal(unknown.code, 2);
    assert.match(unknown.err[0] ?? '', /--teacher: no teacher "gpt"; this server offers jev/);
    const questions = path.join(dir, 'q2.json');
    fs.writeFileSync(questions, JSON.stringify({ refund: { type: 'noul', instructions: 'Refund?' } }));
    const budget = await run(
      'start',
      '--email',
      'a@example.com',
      '--teacher',
      'jev',
      '--questions',
      questions,
      '--budget',
      '0',
    );
    assert.equal(budget.code, 2);
    assert.match(budget.err[0] ?? '', /--budget: an integer from 1 to 100000/);
    const few = await run('start', '--email', 'b@example.com', '--teacher', 'jev', '--questions', questions);
    assert.equal(few.code, 1);
    assert.match(few.err[0] ?? '', /source: this account has 0 unlabelled states, at least 20 are needed/);
  });
});
