/**
 * Deletes reach a running distillation job at once (issue 41), as they reach training jobs (issue 33,
 * job-deletes.test.ts): deleting the account's states, a template, or the account while the job asks
 * its teacher leaves no soft label written after the DELETE returned, and starts no teacher call after
 * it; the job is cancelled or restarted without what was deleted. Every call the job sent is in usage,
 * by day and by job. SQLite, and PostgreSQL when TEST_DATABASE_URL is set; an in-process teacher,
 * gated so that a delete lands while calls are in flight.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TeacherConfig } from '../../src/config.ts';
import type { DecisionEngine } from '../../src/engines/engine.ts';
import { createFakeEngine } from '../../src/engines/fake/fake-engine.ts';
import type { Fitter } from '../../src/jobs/runner.ts';
import { templateOf } from '../../src/systemone/templates.ts';
import { gate } from '../fixtures/gate.ts';
import { calibrationArtifact, jsonl, REFUND, ROUTING, tickets, waitFor } from '../fixtures/teach.ts';
import {
  databases,
  makeTestApp,
  notePostgresSkip,
  type SignedInClient,
  signedInClient,
  type TestApp,
} from '../harness.ts';

const TEACHER: TeacherConfig = {
  id: 'gated',
  kind: 'systemone',
  target: 'http://127.0.0.1:9',
  upstreamModel: undefined,
  apiKey: undefined,
  timeoutMs: 10_000,
  concurrency: 4,
  retries: 0,
};

for (const kind of databases()) {
  describe(`deletes reach a running distillation job (${kind})`, () => {
    let t: TestApp;
    const asking = gate();
    /** Every call the teacher received: when, and the instructions of its questions. */
    const received: { at: number; questions: string[] }[] = [];
    before(async () => {
      notePostgresSkip();
      const inner = createFakeEngine();
      await inner.load();
      const teacher: DecisionEngine = {
        ...inner,
        async answer(request, signal) {
          received.push({ at: Date.now(), questions: request.questions.map((q) => String(q.instructions ?? '')) });
          await asking.pass(signal);
          return inner.answer(request, signal);
        },
      };
      const fitter: Fitter = async (request) => ({
        artifact: calibrationArtifact(request, request.templates.length, 0.1),
        reports: [],
      });
      t = await makeTestApp({
        db: kind,
        fitter,
        jobPollMs: 10,
        jobLeaseMs: 600,
        teachers: [TEACHER],
        teacherOptions: { build: async () => teacher, backoffMs: 1 },
      });
      t.runner.start();
    });
    after(() => t.close());

    /** A signed-in account with `n` uploaded states, and its key's headers. */
    async function account(n: number) {
      const client = await signedInClient(t);
      const { key } = await (await client.request('/control/v1/keys', { body: { name: 'k' } })).json();
      const auth = { authorization: `Bearer ${key}` };
      const up = await t.req('/control/v1/states', {
        body: jsonl(tickets(n).map((x) => ({ state: x.state }))),
        headers: { ...auth, 'content-type': 'application/jsonl' },
      });
      assert.equal(up.status, 201);
      return { client, auth };
    }

    /** An account with 40 states, and its distillation job of `questions` asking 2 at once, held at the gate. */
    async function labelling(questions: Record<string, unknown>) {
      const { client } = await account(40);
      const blocked = asking.close();
      const res = await client.request('/control/v1/distillation-jobs', {
        body: { teacher: TEACHER.id, questions, concurrency: 2 },
      });
      assert.equal(res.status, 202, await res.clone().text());
      const job = await res.json();
      await blocked;
      return { client, job };
    }

    /** Soft labels of `userId` in the database. */
    const softLabels = async (userId: string) =>
      (await t.db.kysely.selectFrom('soft_label').select('template_id').where('user_id', '=', userId).execute()).map(
        (r) => r.template_id,
      );

    /** Deletes through `del`, then opens the gate: the calls in flight return after the delete. */
    async function deleteMidCall(del: () => Promise<Response>, userId: string) {
      const res = await del();
      assert.ok(res.status === 204 || res.status === 200, `${res.status} ${await res.clone().text()}`);
      const returned = Date.now();
      const labelsAtDelete = await softLabels(userId);
      asking.open();
      return { returned, labelsAtDelete };
    }

    /** The job once it has succeeded or failed. */
    const ended = (client: SignedInClient, id: string) =>
      waitFor(
        async () => {
          const j = await (await client.request(`/control/v1/training-jobs/${id}`)).json();
          return j.status === 'succeeded' || j.status === 'failed' ? j : undefined;
        },
        15_000,
        'the job to end',
      );

    const stopped = (id: string) =>
      waitFor(async () => !t.runner.current().some((j) => j.id === id), 5000, 'the run to stop');

    test('DELETE /control/v1/states while its job asks the teacher: no soft label or teacher call after the 204, the job cancelled', async () => {
      const { client, job } = await labelling({ refund: REFUND });
      const at = await deleteMidCall(() => client.request('/control/v1/states', { method: 'DELETE' }), client.userId);
      await stopped(job.id);
      assert.deepEqual(await softLabels(client.userId), at.labelsAtDelete, 'no soft label written after the DELETE');
      assert.deepEqual(
        received.filter((r) => r.at > at.returned),
        [],
        'no teacher call started after the DELETE returned',
      );
      const done = await (await client.request(`/control/v1/training-jobs/${job.id}`)).json();
      assert.equal(done.status, 'cancelled');
      assert.match(done.message, /^cancelled: its states were deleted/);
      assert.equal(done.attempts, 0);
    });

    test("a template's examples deleted while its job asks the teacher: none of its soft labels stays, the job goes on without it", async () => {
      const { client, job } = await labelling({ team: ROUTING, refund: REFUND });
      const gone = templateOf(ROUTING).id;
      assert.ok((job.templates as string[]).includes(gone));
      const at = await deleteMidCall(
        () => client.request(`/control/v1/examples/${gone}`, { method: 'DELETE' }),
        client.userId,
      );
      const done = await ended(client, job.id);
      assert.equal(done.status, 'succeeded', done.message);
      assert.equal(done.templates.includes(gone), false);
      assert.equal((await softLabels(client.userId)).includes(gone), false, 'no soft label of the deleted template');
      const after = received.filter((r) => r.at > at.returned);
      assert.ok(after.length > 0, 'the restarted job asked about the other template');
      assert.ok(
        after.every((r) => !r.questions.includes(ROUTING.instructions)),
        'no teacher call about the deleted template after the DELETE returned',
      );
    });

    test('the account deleted while its job asks the teacher: nothing of it written, no teacher call after', async () => {
      const { client, job } = await labelling({ refund: REFUND });
      const at = await deleteMidCall(() => client.request('/control/v1/account', { method: 'DELETE' }), client.userId);
      await stopped(job.id);
      assert.deepEqual(await softLabels(client.userId), []);
      assert.deepEqual(
        received.filter((r) => r.at > at.returned),
        [],
      );
    });

    test('every teacher call of a distillation job is in usage, by day and by job; a key counts its own requests', async () => {
      const { client, auth } = await account(30);
      const res = await client.request('/control/v1/distillation-jobs', {
        body: { teacher: TEACHER.id, questions: { refund: REFUND } },
      });
      const job = await res.json();
      const done = await ended(client, job.id);
      assert.equal(done.status, 'succeeded', done.message);
      assert.equal(done.teacher_calls, 30);
      const ask = await t.req('/v1/systemone', {
        body: { state: 'a ticket', questions: { refund: REFUND } },
        headers: auth,
      });
      assert.equal(ask.status, 200);
      await t.usage.flush();
      const report = await (await client.request('/control/v1/usage?days=2')).json();
      assert.equal(report.totals.teacher_calls, 30, "the account's totals count its job's calls");
      assert.equal(report.totals.requests, 1, 'a teacher call is not a request');
      assert.equal(report.daily.at(-1).teacher_calls, 30);
      assert.deepEqual(
        report.jobs.map((j: { id: string; teacher: string; totals: { teacher_calls: number } }) => [
          j.id,
          j.teacher,
          j.totals.teacher_calls,
        ]),
        [[job.id, TEACHER.id, 30]],
      );
      assert.equal(report.jobs[0].daily.at(-1).teacher_calls, 30);
      const own = await (await t.req('/control/v1/usage?days=2', { headers: auth })).json();
      assert.deepEqual([own.totals.requests, own.totals.teacher_calls], [1, 0], "a key's totals are its requests");
      assert.deepEqual(
        own.jobs.map((j: { id: string }) => j.id),
        [job.id],
        "the account's jobs are listed to its keys too",
      );
    });
  });
}
