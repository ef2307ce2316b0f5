/**
 * The training job queue across instances: several service graphs on one database (SQLite, and
 * PostgreSQL when TEST_DATABASE_URL is set) run each job once; a job survives its instance stopping
 * (handed back) and its instance being killed (taken over when its lease lapses).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { Fitter } from '../../src/jobs/runner.ts';
import {
  calibrationArtifact,
  jsonl,
  ROUTING,
  row,
  sharedDatabase,
  tickets,
  upload,
  waitFor,
} from '../fixtures/teach.ts';
import { databases, makeTestApp, notePostgresSkip, type TestApp } from '../harness.ts';
import { ROOT } from '../server.ts';

/** A fitter that records what it fitted and returns a plain calibration head for the first template. */
function countingFitter(calls: string[], who: string, hold?: Promise<void>): Fitter {
  return async (request, progress, signal) => {
    calls.push(`${who}:${request.templates.map((t) => t.rows.length).join(',')}`);
    progress(0.5, 'fitting');
    // Like the real fitter, it stops when the job is aborted (the server stopping).
    await Promise.race([
      hold,
      new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
    ]);
    return { artifact: calibrationArtifact(request, 1), reports: [] };
  };
}

async function withExamples(t: TestApp, n: number): Promise<string[]> {
  const users: string[] = [];
  for (let i = 0; i < n; i++) {
    const user = await t.accounts.ensure(`jobs-${i}-${Math.random().toString(36).slice(2)}@example.com`);
    const key = await t.keys.create(user.id, 'k');
    const rows = tickets(24).map((x) => row(x.state, { team: ROUTING }, { team: x.team }));
    assert.equal((await upload(t, jsonl(rows), key.key)).status, 201);
    assert.equal(
      (await t.req('/control/v1/training-jobs', { body: {}, headers: { authorization: `Bearer ${key.key}` } })).status,
      202,
    );
    users.push(user.id);
  }
  return users;
}

/** The adapters stored, of one account or of all. */
function adaptersOf(t: TestApp, user?: string) {
  let q = t.db.kysely.selectFrom('adapter').select('id');
  if (user !== undefined) q = q.where('user_id', '=', user);
  return q.execute();
}

for (const kind of databases()) {
  describe(`training jobs across instances (${kind})`, () => {
    let shared: Awaited<ReturnType<typeof sharedDatabase>>;
    before(async () => {
      notePostgresSkip();
      shared = await sharedDatabase(kind);
    });
    after(() => shared.drop());

    const jobsOf = async (t: TestApp) =>
      t.db.kysely.selectFrom('training_job').select(['id', 'status', 'attempts', 'adapter_id']).execute();

    test('two instances polling one database run each of 6 jobs exactly once', async () => {
      const calls: string[] = [];
      const a = await makeTestApp({
        database: await shared.open(),
        trainingJobs: false,
        fitter: countingFitter(calls, 'a'),
        jobPollMs: 10,
      });
      const b = await makeTestApp({
        database: await shared.open(),
        trainingJobs: false,
        fitter: countingFitter(calls, 'b'),
        jobPollMs: 10,
      });
      try {
        await withExamples(a, 6);
        a.runner.start();
        b.runner.start();
        const jobs = await waitFor(
          async () => {
            const list = await jobsOf(a);
            return list.length === 6 && list.every((j) => j.status === 'succeeded') ? list : undefined;
          },
          30_000,
          '6 jobs to succeed',
        );
        assert.equal(calls.length, 6, `fitted: ${calls.join(' ')}`);
        assert.ok(
          jobs.every((j) => Number(j.attempts) === 0),
          'no run failed',
        );
        assert.equal((await adaptersOf(a)).length, 6, 'one adapter per job');
      } finally {
        await a.close();
        await b.close();
      }
    });

    test('an instance that stops mid-job hands it back; another finishes it once', async () => {
      const calls: string[] = [];
      let release: () => void = () => {};
      const hold = new Promise<void>((resolve) => {
        release = resolve;
      });
      const a = await makeTestApp({
        database: await shared.open(),
        fitter: countingFitter(calls, 'a', hold),
        jobPollMs: 10,
      });
      const [user] = await withExamples(a, 1);
      a.runner.start();
      const running = await waitFor(
        async () => {
          const j = (await jobsOf(a)).find((x) => x.status === 'running');
          return j && calls.length === 1 ? j : undefined;
        },
        10_000,
        'the job to be fitting',
      );
      await a.close();
      release();
      const handedBack = await (await shared.open()).kysely
        .selectFrom('training_job')
        .selectAll()
        .where('id', '=', running.id)
        .executeTakeFirstOrThrow();
      assert.equal(handedBack.status, 'queued');
      const b = await makeTestApp({ database: await shared.open(), fitter: countingFitter(calls, 'b'), jobPollMs: 10 });
      try {
        b.runner.start();
        const done = await waitFor(
          async () => (await jobsOf(b)).find((x) => x.id === running.id && x.status === 'succeeded'),
          10_000,
          'the job to finish',
        );
        assert.deepEqual(
          calls.map((c) => c.split(':')[0]),
          ['a', 'b'],
        );
        assert.equal(Number(done.attempts), 0, 'a graceful hand-back does not count');
        assert.equal((await adaptersOf(b, user ?? '')).length, 1);
      } finally {
        await b.close();
      }
    });

    test('an instance killed mid-job (SIGKILL): another takes the job over when its lease lapses', async () => {
      const calls: string[] = [];
      const b = await makeTestApp({
        database: await shared.open(),
        fitter: countingFitter(calls, 'b'),
        jobPollMs: 10,
        jobLeaseMs: 500,
      });
      const child = spawn(process.execPath, ['test/fixtures/job-instance.ts'], {
        cwd: ROOT,
        env: { ...process.env, JOB_DB_URL: shared.url, JOB_LEASE_MS: '500' },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      try {
        const fitting = new Promise<void>((resolve) =>
          child.stdout.on('data', (d) => String(d).includes('FITTING') && resolve()),
        );
        const [user] = await withExamples(b, 1);
        await fitting;
        const job = (await jobsOf(b)).find((j) => j.status === 'running');
        assert.ok(job, 'the other process holds the job');
        child.kill('SIGKILL');
        b.runner.start();
        const done = await waitFor(
          async () => (await jobsOf(b)).find((x) => x.id === job.id && x.status === 'succeeded'),
          15_000,
          'the job to be taken over',
        );
        assert.equal(Number(done.attempts), 1, 'the killed run counts, the one that succeeded does not');
        assert.equal(calls.length, 1);
        assert.equal((await adaptersOf(b, user ?? '')).length, 1);
      } finally {
        child.kill('SIGKILL');
        await b.close();
      }
    });
  });
}
