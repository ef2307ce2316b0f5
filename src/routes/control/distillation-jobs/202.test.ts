import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ROUTING, tickets, uploadStates } from '../../../../test/fixtures/teach.ts';
import { makeTestApp, signedInClient, TEST_SERVICE_OPTIONS, type TestApp } from '../../../../test/harness.ts';
import type { TeacherConfig } from '../../../config.ts';

const TEACHER: TeacherConfig = {
  id: 'jev',
  kind: 'systemone',
  target: 'http://127.0.0.1:9',
  upstreamModel: undefined,
  apiKey: 'sk-teacher-never-shown-0123',
  timeoutMs: 1000,
  concurrency: 2,
  retries: 1,
};

async function withStates(t: TestApp, n: number) {
  const res = await uploadStates(
    t,
    tickets(n).map((x) => x.state),
  );
  assert.equal(res.status, 201);
}

describe('POST /control/v1/distillation-jobs 200 (dry run), 202, 400, 404, 422', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp({ teachers: [TEACHER] });
  });
  after(() => t.close());

  test('400 naming the source while the account has under 20 states', async () => {
    await withStates(t, 5);
    const res = await t.req('/control/v1/distillation-jobs', {
      body: { teacher: 'jev', questions: { team: ROUTING } },
    });
    assert.equal(res.status, 400);
    assert.match((await res.json()).message, /source: this account has 5 unlabelled states, at least 20 are needed/);
  });

  test('dry run: the call budget before anything is queued; 202 queues a job of kind distill in the training queue', async () => {
    await withStates(t, 40);
    const body = { teacher: 'jev', questions: { team: ROUTING, refund: { type: 'noul', instructions: 'refund?' } } };
    const dry = await t.req('/control/v1/distillation-jobs', { body: { ...body, dry_run: true } });
    assert.equal(dry.status, 200);
    assert.deepEqual((await dry.json()).estimate, {
      teacher: 'jev',
      templates: 2,
      // distinct states: the 5 uploaded first are among the 40
      states: 40,
      already_labelled: 0,
      teacher_calls: 40,
      budget: 40,
      teacher_questions: 80,
      estimated_seconds: null,
    });
    assert.equal((await (await t.req('/control/v1/training-jobs')).json()).data.length, 0, 'nothing queued');
    const res = await t.req('/control/v1/distillation-jobs', {
      body: { ...body, budget: 30, fallback_threshold: 0.5 },
    });
    assert.equal(res.status, 202);
    const job = await res.json();
    assert.equal(job.kind, 'distill');
    assert.equal(job.status, 'queued');
    assert.equal(job.teacher_calls, 0);
    assert.equal(job.templates.length, 2);
    assert.deepEqual(
      { ...job.distill, estimate: undefined },
      {
        teacher: 'jev',
        source: 'states',
        budget: 30,
        concurrency: 4,
        human_weight: 3,
        fallback_threshold: 0.5,
        estimate: undefined,
      },
    );
    assert.equal(job.distill.estimate.teacher_calls, 30);
    const listed = (await (await t.req('/control/v1/training-jobs')).json()).data;
    assert.deepEqual(
      listed.map((j: { id: string; kind: string }) => [j.id, j.kind]),
      [[job.id, 'distill']],
    );
    // Its templates are the account's, to be deleted like any other.
    const templates = (await (await t.req('/control/v1/examples')).json()).templates;
    assert.equal(templates.length, 2);
    const other = await signedInClient(t);
    assert.equal((await other.request(`/control/v1/training-jobs/${job.id}`)).status, 404);
    assert.ok(!JSON.stringify(job).includes('sk-teacher'));
  });

  test("source retained: the states of the account's retained requests", async () => {
    const fresh = await makeTestApp({ teachers: [TEACHER] });
    try {
      assert.equal((await fresh.req('/control/v1/retention', { method: 'PUT', body: { days: 7 } })).status, 200);
      for (const x of tickets(24)) {
        const res = await fresh.req('/v1/systemone', { body: { state: x.state, questions: { team: ROUTING } } });
        assert.equal(res.status, 200);
      }
      const dry = await fresh.req('/control/v1/distillation-jobs', {
        body: { teacher: 'jev', questions: { team: ROUTING }, source: 'retained', dry_run: true },
      });
      assert.equal(dry.status, 200);
      assert.equal((await dry.json()).estimate.states, 24);
    } finally {
      await fresh.close();
    }
  });

  test('404 naming the teacher field for a teacher the server does not offer', async () => {
    const res = await t.req('/control/v1/distillation-jobs', {
      body: { teacher: 'gpt', questions: { team: ROUTING } },
    });
    assert.equal(res.status, 404);
    assert.match((await res.json()).message, /teacher: no teacher "gpt" on this server \(it offers jev/);
  });

  test('422 naming the field: no questions, a threshold over 1, an unknown field', async () => {
    for (const [body, field] of [
      [{ teacher: 'jev', questions: {} }, 'questions'],
      [{ teacher: 'jev', questions: { team: ROUTING }, fallback_threshold: 2 }, 'fallback_threshold'],
      [{ teacher: 'jev', questions: { team: ROUTING }, budget: 0 }, 'budget'],
      [{ teacher: 'jev', questions: { team: ROUTING }, extra: 1 }, ''],
    ] as const) {
      const res = await t.req('/control/v1/distillation-jobs', { body });
      assert.equal(res.status, 422, JSON.stringify(body));
      const json = await res.json();
      if (field) assert.ok(JSON.stringify(json.detail).includes(field), JSON.stringify(json));
    }
  });
  test('a question as large as POST /v1/systemone takes (250 options, 18 KiB) is accepted; past BRIER_MAX_BODY_BYTES a 413 names it', async () => {
    await withStates(t, 40);
    const criteria = Object.fromEntries(
      Array.from({ length: 250 }, (_, i) => [
        `intent_${i}`,
        `the customer asks about topic number ${i} among the many this support desk handles`,
      ]),
    );
    const big = { type: 'choice', instructions: 'Which intent is this?', criteria };
    const body = { teacher: 'jev', questions: { intent: big }, dry_run: true };
    assert.ok(JSON.stringify(body).length > 16_384, "over the control routes' 16 KiB");
    const asked = await t.req('/v1/systemone', { body: { state: 'where is my parcel', questions: { intent: big } } });
    assert.equal(asked.status, 200);
    const dry = await t.req('/control/v1/distillation-jobs', { body });
    assert.equal(dry.status, 200, await dry.clone().text());
    assert.equal((await dry.json()).estimate.templates, 1);
    const over = await t.req('/control/v1/distillation-jobs', {
      body: { ...body, questions: { intent: { ...big, instructions: 'x'.repeat(TEST_SERVICE_OPTIONS.maxBodyBytes) } } },
    });
    assert.equal(over.status, 413);
    assert.match((await over.json()).message, /\(the limit, BRIER_MAX_BODY_BYTES\)/);
  });
});
