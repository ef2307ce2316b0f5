/**
 * Training jobs survive a restart (issue 33): a real server (src/main.ts, the embedded engine) with
 * three accounts' jobs, one of them running and two queued, is stopped (SIGTERM) and started again
 * on the same database. The new process claims nothing while its model loads, and every job then
 * succeeds, none counted as a failure.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { jsonl, ROUTING, row, tickets, waitFor } from '../fixtures/teach.ts';
import { startServer, waitHealthy } from '../server.ts';

test('jobs queued and running when the server restarts all succeed after it, none failed', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-restart-'));
  const env = { BRIER_DATA_DIR: dataDir, BRIER_THREADS: '1', BRIER_TRAINING_CONCURRENCY: '1' };
  let server = await startServer(env);
  try {
    await waitHealthy(server.url);
    const jobs: { id: string; key: string }[] = [];
    for (let i = 0; i < 3; i++) {
      const key = await server.createKey(`restart-${i}@example.com`);
      const auth = { authorization: `Bearer ${key}` };
      const rows = tickets(40).map((x) => row(x.state, { team: ROUTING }, { team: x.team }));
      const up = await fetch(`${server.url}/control/v1/examples`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/jsonl' },
        body: jsonl(rows),
      });
      assert.equal(up.status, 201);
      const job = await fetch(`${server.url}/control/v1/training-jobs`, { method: 'POST', headers: auth });
      assert.equal(job.status, 202);
      jobs.push({ id: ((await job.json()) as { id: string }).id, key });
    }
    const status = async (url: string, j: { id: string; key: string }) =>
      (await (
        await fetch(`${url}/control/v1/training-jobs/${j.id}`, { headers: { authorization: `Bearer ${j.key}` } })
      ).json()) as { status: string; attempts: number; message: string };
    await waitFor(
      async () => (await Promise.all(jobs.map((j) => status(server.url, j)))).some((j) => j.status === 'running'),
      60_000,
      'a job to run',
    );
    assert.equal(await server.stop(), 0);
    // The same database; the model loads again while the queue is already there.
    server = await startServer(env);
    const url = server.url;
    const done = await waitFor(
      async () => {
        const all = await Promise.all(jobs.map((j) => status(url, j)));
        for (const j of all) assert.notEqual(j.status, 'failed', j.message);
        return all.every((j) => j.status === 'succeeded') ? all : undefined;
      },
      180_000,
      'every job to succeed',
    );
    assert.deepEqual(
      done.map((j) => j.attempts),
      [0, 0, 0],
    );
  } finally {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
