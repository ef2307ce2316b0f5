/**
 * Distillation's storage on SQLite and PostgreSQL (issue 34): a job on the fake engine (a
 * calibration head) labels states through the teacher fixture and stores soft labels; a second job
 * asks the teacher nothing about states already labelled; deleting the template deletes its soft
 * labels, and deleting the account deletes its states and soft labels.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { tickets, uploadStates } from '../fixtures/teach.ts';
import { startTeacherServer, type TeacherServer } from '../fixtures/teacher-server.ts';
import { databases, makeTestApp, notePostgresSkip, type TestApp } from '../harness.ts';

const KEY = 'db-teacher-key-0123456789abcdef';
const REFUND = {
  type: 'noul',
  instructions: 'Is the customer asking for money back?',
  criteria: { true: 'charged refund payment invoice' },
} as const;

notePostgresSkip();
for (const kind of databases()) {
  describe(`distillation storage (${kind})`, () => {
    let teacher: TeacherServer;
    let t: TestApp;
    before(async () => {
      teacher = await startTeacherServer({ key: KEY });
      t = await makeTestApp({
        db: kind,
        teachers: [
          {
            id: 'fixture',
            kind: 'systemone',
            target: teacher.url,
            upstreamModel: undefined,
            apiKey: KEY,
            timeoutMs: 2000,
            concurrency: 4,
            retries: 1,
          },
        ],
      });
    });
    after(async () => {
      await t.close();
      await teacher.close();
    });

    test('a job labels each state once; a second job asks only about new states; deletes take soft labels and states', async () => {
      const up = await uploadStates(
        t,
        tickets(30).map((x) => x.state),
      );
      assert.equal(up.status, 201);
      const body = { teacher: 'fixture', questions: { refund: REFUND } };
      const first = await (await t.req('/control/v1/distillation-jobs', { body })).json();
      assert.equal(await t.runner.runOnce(), true);
      const done = await (await t.req(`/control/v1/training-jobs/${first.id}`)).json();
      assert.equal(done.status, 'succeeded', done.message);
      assert.equal(done.teacher_calls, 30);
      await uploadStates(
        t,
        tickets(40)
          .slice(30)
          .map((x) => x.state),
      );
      const dry = await (await t.req('/control/v1/distillation-jobs', { body: { ...body, dry_run: true } })).json();
      assert.deepEqual([dry.estimate.states, dry.estimate.already_labelled, dry.estimate.teacher_calls], [40, 30, 10]);
      const calls = teacher.calls();
      const second = await (await t.req('/control/v1/distillation-jobs', { body })).json();
      assert.equal(await t.runner.runOnce(), true);
      const again = await (await t.req(`/control/v1/training-jobs/${second.id}`)).json();
      assert.equal(again.status, 'succeeded', again.message);
      assert.equal(teacher.calls() - calls, 10, 'only the new states were asked');
      assert.equal(again.result.distill.labelled_states, 40);
      const counts = await (await t.req('/control/v1/states')).json();
      assert.deepEqual(
        counts.soft_labels.map((s: { count: number }) => s.count),
        [40],
      );
      const template = counts.soft_labels[0].template;
      assert.equal((await t.req(`/control/v1/examples/${template}`, { method: 'DELETE' })).status, 204);
      assert.deepEqual((await (await t.req('/control/v1/states')).json()).soft_labels, []);

      // The account goes with its states and soft labels.
      await t.teach.distill.addSoftLabels(t.account.id, 'fixture', 'job_x', [
        { templateId: template, state: '"x"', distribution: [0.5, 0.5] },
      ]);
      await t.db.kysely.deleteFrom('user').where('id', '=', t.account.id).execute();
      for (const table of ['soft_label', 'unlabelled_state'] as const) {
        const left = await t.db.kysely.selectFrom(table).select('id').where('user_id', '=', t.account.id).execute();
        assert.equal(left.length, 0, table);
      }
    });
  });
}

describe('a teacher that keeps failing', () => {
  test('fails the job, naming the teacher, once more than half of its states failed; nothing is stored', async () => {
    const teacher = await startTeacherServer({ key: KEY });
    const t = await makeTestApp({
      teachers: [
        {
          id: 'down',
          kind: 'systemone',
          target: teacher.url,
          upstreamModel: undefined,
          apiKey: KEY,
          timeoutMs: 2000,
          concurrency: 2,
          retries: 1,
        },
      ],
      teacherOptions: { backoffMs: 1 },
    });
    try {
      await uploadStates(
        t,
        tickets(24).map((x) => x.state),
      );
      teacher.failNext(1000, 500);
      const job = await (
        await t.req('/control/v1/distillation-jobs', { body: { teacher: 'down', questions: { refund: REFUND } } })
      ).json();
      assert.equal(await t.runner.runOnce(), true);
      const failed = await (await t.req(`/control/v1/training-jobs/${job.id}`)).json();
      assert.equal(failed.status, 'failed');
      assert.match(
        failed.message,
        /failed: the teacher failed on 13 states \(teacher down failed after 2 attempts: upstream answered 500/,
      );
      assert.ok(teacher.calls() <= 2 * 14, `no more states asked after the failure (${teacher.calls()} calls)`);
      assert.deepEqual((await (await t.req('/control/v1/states')).json()).soft_labels, []);
      assert.equal((await (await t.req('/control/v1/adapters')).json()).data.length, 0);
    } finally {
      await t.close();
      await teacher.close();
    }
  });
});
