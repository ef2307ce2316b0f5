/**
 * The teach guide's ready example file (docs/public/examples/tickets.jsonl, issue 41: its two-row
 * sample could not be trained) uploads as one template with enough examples to fit, and a training
 * job on it ends with a report (the fake engine here: whether the adapter is served is not the point).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { MIN_EXAMPLES_PER_TEMPLATE } from '../../src/jobs/job-kit.ts';
import { upload } from '../fixtures/teach.ts';
import { makeTestApp } from '../harness.ts';
import { ROOT } from '../server.ts';

test("the teach guide's example file is linked, uploads as one template of 20 or more, and trains", async () => {
  const guide = fs.readFileSync(path.join(ROOT, 'docs', 'guide', 'teach-your-task.md'), 'utf8');
  assert.ok(guide.includes('href="/docs/examples/tickets.jsonl"'), 'the guide links the file');
  const file = fs.readFileSync(path.join(ROOT, 'docs', 'public', 'examples', 'tickets.jsonl'), 'utf8');
  const t = await makeTestApp();
  try {
    const res = await upload(t, file);
    assert.equal(res.status, 201, await res.clone().text());
    const body = await res.json();
    assert.equal(body.templates.length, 1);
    assert.ok(body.added >= MIN_EXAMPLES_PER_TEMPLATE, `${body.added} rows`);
    assert.equal((await t.req('/control/v1/training-jobs', { body: {} })).status, 202);
    assert.equal(await t.runner.runOnce(), true);
    const [job] = (await (await t.req('/control/v1/training-jobs')).json()).data;
    assert.equal(job.status, 'succeeded', job.message);
    assert.equal(job.result.templates[0].n, body.added);
  } finally {
    await t.close();
  }
});
