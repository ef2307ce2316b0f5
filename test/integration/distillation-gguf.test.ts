/**
 * A real small instruct model as a GGUF teacher (issue 34): SmolLM2-135M-Instruct from ../shared
 * (skipped with a message without it), asked through the teachers' bounded calls, then teaching a
 * distillation job of 20 states end to end. Checks the mechanics only (distributions, the job's calls
 * and report), never the quality of so small a model.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { TeacherConfig } from '../../src/config.ts';
import { createTeachers } from '../../src/engines/teachers.ts';
import { toDecisionRequest } from '../../src/systemone/normalize.ts';
import { tickets, uploadStates } from '../fixtures/teach.ts';
import { makeTestApp, type TestApp } from '../harness.ts';
import { ROOT } from '../server.ts';

const MODEL = path.resolve(ROOT, '..', 'shared', 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf');
const present = fs.existsSync(MODEL);
if (!present) console.log(`# skipped: the GGUF teacher tests (${MODEL} is absent)`);

const SMOL: TeacherConfig = {
  id: 'smol',
  kind: 'gguf',
  target: MODEL,
  upstreamModel: undefined,
  apiKey: undefined,
  timeoutMs: 120_000,
  concurrency: 1,
  retries: 0,
};

const REFUND = { type: 'noul', instructions: 'Is the customer asking for money back?' } as const;

describe('a GGUF teacher (SmolLM2-135M-Instruct)', { skip: present ? false : '../shared/models is absent' }, () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp({ teachers: [SMOL], teacherOptions: { gguf: { threads: 1 } } });
  });
  after(() => t.close());

  test('answers distributions through the bounded teacher calls, its time per call measured', async () => {
    const teachers = createTeachers([SMOL], { gguf: { threads: 1 } });
    try {
      const teacher = teachers.get('smol');
      assert.ok(teacher);
      const answer = await teacher.ask(
        toDecisionRequest('I was charged twice, please refund me', [
          REFUND,
          { type: 'choice', instructions: 'Which team?', criteria: { billing: null, tech: null, other: null } },
        ]),
      );
      assert.equal(answer.probabilities.length, 2);
      for (const p of answer.probabilities) assert.ok(Math.abs(p.reduce((a, b) => a + b, 0) - 1) < 1e-6);
      assert.equal(answer.probabilities[1]?.length, 3);
      assert.ok((teacher.stats().msPerCall ?? 0) > 0);
    } finally {
      await teachers.close();
    }
  });

  test('teaches a distillation job of 20 states end to end', async () => {
    const up = await uploadStates(
      t,
      tickets(20).map((x) => x.state),
    );
    assert.equal(up.status, 201);
    const queued = await t.req('/control/v1/distillation-jobs', {
      body: { teacher: 'smol', questions: { refund: REFUND }, concurrency: 1 },
    });
    assert.equal(queued.status, 202, await queued.clone().text());
    assert.equal(await t.runner.runOnce(), true);
    const job = await (await t.req(`/control/v1/training-jobs/${(await queued.json()).id}`)).json();
    assert.equal(job.status, 'succeeded', job.message);
    assert.equal(job.teacher_calls, 20);
    const report = job.result.templates[0];
    assert.ok(report.distill, report.reason);
    assert.equal(report.distill.teacher, 'smol');
    assert.ok(report.distill.nTest >= 4);
    const listed = (await (await t.req('/control/v1/teachers')).json()).data[0];
    assert.equal(listed.kind, 'gguf');
    assert.ok(listed.ms_per_call > 0);
    console.log(`# SmolLM2 teacher: ${listed.ms_per_call} ms a call; ${report.reason}`);
  });
});
