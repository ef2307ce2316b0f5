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
import { runJobsCommand } from './jobs.ts';

describe('brier jobs (CLI)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-cli-jobs-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const url = `file:${path.join(dir, 'db.sqlite')}`;
  const config = loadConfig({ DATABASE_URL: url, BRIER_DATA_DIR: dir });

  async function run(...argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runJobsCommand(argv, config, { stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
    return { code, out, err };
  }

  test('lists an account\u2019s jobs with their queue position and cancels one; another account\u2019s job is not found', async () => {
    const db = await openDb(url);
    await migrate(db);
    const user = await createAccountService(db).ensure('cli-jobs@example.com');
    const job = await createJobQueue(db).enqueue(user.id, ['tpl_a'], 30);
    await db.close();
    const list = await run('list', '--email', 'cli-jobs@example.com');
    assert.equal(list.code, 0, list.err.join('\n'));
    assert.match(list.out[0] ?? '', new RegExp(`^${job.id}\\tqueued\\t0%\\tqueue position 1\\twaiting for a worker$`));
    const other = await run('cancel', '--email', 'someone-else@example.com', '--id', job.id);
    assert.equal(other.code, 1);
    assert.match(other.err.join('\n'), /no training job job_\w+ in this account/);
    const cancelled = await run('cancel', '--email', 'cli-jobs@example.com', '--id', job.id);
    assert.equal(cancelled.code, 0, cancelled.err.join('\n'));
    assert.equal(cancelled.out[0], `${job.id} cancelled: cancelled by the account`);
    const again = await run('cancel', '--email', 'cli-jobs@example.com', '--id', job.id);
    assert.equal(again.code, 1);
    assert.match(again.err.join('\n'), /has already been cancelled/);
    assert.equal((await run('cancel', '--email', 'cli-jobs@example.com')).code, 2, 'no --id: usage');
  });
});
