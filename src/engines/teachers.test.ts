import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { writeUniformCalibration } from '../../test/fixtures/model-calibration.ts';
import { startTeacherServer, type TeacherServer } from '../../test/fixtures/teacher-server.ts';
import type { TeacherConfig } from '../config.ts';
import { toDecisionRequest } from '../systemone/normalize.ts';
import { createTeachers } from './teachers.ts';

const KEY = 'teacher-secret-key-0123456789abcdef';

describe('teachers (a System One teacher on loopback)', () => {
  let server: TeacherServer;
  before(async () => {
    server = await startTeacherServer({ key: KEY });
  });
  after(() => server.close());

  const config = (over: Partial<TeacherConfig> = {}): TeacherConfig => ({
    id: 't1',
    kind: 'systemone',
    target: server.url,
    upstreamModel: undefined,
    apiKey: KEY,
    timeoutMs: 2000,
    concurrency: 2,
    retries: 3,
    ...over,
  });
  const request = toDecisionRequest('I was charged twice, refund please', [
    { type: 'choice', instructions: 'team', criteria: { billing: 'charges refund', tech: 'bugs crash' } },
  ]);

  test('answers with the teacher distribution and measures the time per call', async () => {
    const teachers = createTeachers([config()]);
    const t = teachers.get('t1');
    assert.ok(t);
    assert.equal(t.stats().msPerCall, null);
    const a = await t.ask(request);
    assert.equal(a.probabilities.length, 1);
    assert.ok((a.probabilities[0]?.[0] ?? 0) > 0.9, 'billing is the teacher answer');
    assert.equal(t.stats().calls, 1);
    assert.ok((t.stats().msPerCall ?? -1) >= 0);
    assert.ok(server.authorizations.every((h) => h === `Bearer ${KEY}`));
    await teachers.close();
  });

  test('teaches through its calibration: shrunk toward uniform without a file, the fitted map with one', async () => {
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { serverCalibrationKey } = await import('./calibrated.ts');
    const dir = await mkdtemp(join(tmpdir(), 'brier-teacher-cal-'));
    try {
      const raw = createTeachers([config()]);
      const [p] = (await raw.get('t1')?.ask(request))?.probabilities ?? [];
      await raw.close();
      const shrunk = createTeachers([config()], { calibration: { dir, uncalibrated: 'shrink' } });
      const [q] = (await shrunk.get('t1')?.ask(request))?.probabilities ?? [];
      await shrunk.close();
      assert.ok(p && q);
      for (const [i, v] of p.entries()) {
        assert.ok(Math.abs((q[i] ?? 0) - (0.5 * v + 0.5 / p.length)) < 1e-9, `option ${i}`);
      }
      await writeUniformCalibration(dir, serverCalibrationKey('upstream', server.url, ''), server.url);
      const fitted = createTeachers([config()], { calibration: { dir, uncalibrated: 'shrink' } });
      const [r] = (await fitted.get('t1')?.ask(request))?.probabilities ?? [];
      await fitted.close();
      assert.deepEqual(r, [0.5, 0.5], 'the fitted map (alpha 1: uniform) is what it teaches');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("retries the teacher's 429s, 5xx and timeouts with backoff, then answers", async () => {
    const teachers = createTeachers([config({ timeoutMs: 300 })], { backoffMs: 5 });
    const t = teachers.get('t1');
    assert.ok(t);
    await t.ask(request);
    const before = server.calls();
    server.failNext(1, 429);
    server.failNext(1, 500);
    server.failNext(1, 'stall');
    const a = await t.ask(request);
    assert.ok((a.probabilities[0]?.[0] ?? 0) > 0.9);
    assert.equal(server.calls() - before, 4, 'three failed attempts and one answered');
    assert.equal(t.stats().failedAttempts, 3);
    await teachers.close();
  });

  test('gives up after its retries with a 503-class error naming the teacher; a 4xx is not retried', async () => {
    const teachers = createTeachers([config({ retries: 1 })], { backoffMs: 5 });
    const t = teachers.get('t1');
    assert.ok(t);
    server.failNext(2, 503);
    await assert.rejects(t.ask(request), (e: { code?: string; message: string }) => {
      assert.equal(e.code, 'OVERLOADED');
      assert.match(e.message, /teacher t1 failed after 2 attempts/);
      assert.doesNotMatch(e.message, new RegExp(KEY));
      return true;
    });
    const before = server.calls();
    server.failNext(1, 422);
    await assert.rejects(t.ask(request), /after 1 attempts/);
    assert.equal(server.calls() - before, 1);
    await teachers.close();
  });

  test('at most `concurrency` calls at once', async () => {
    const slow = await startTeacherServer({ key: KEY, delayMs: 60 });
    const teachers = createTeachers([config({ target: slow.url, concurrency: 2 })]);
    const t = teachers.get('t1');
    assert.ok(t);
    const began = performance.now();
    await Promise.all(Array.from({ length: 4 }, () => t.ask(request)));
    // 4 calls of 60 ms, 2 at a time: at least two rounds.
    assert.ok(performance.now() - began >= 110);
    await teachers.close();
    await slow.close();
  });
});

describe('teachers: an OpenAI-compatible completions server (the vLLM-shaped fixture on a tiny GGUF)', () => {
  test('answers distributions read from its log-probabilities, with the key held here', async () => {
    const { existsSync } = await import('node:fs');
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join, resolve } = await import('node:path');
    const { startCompletionsServer } = await import('../../test/fixtures/completions-server.ts');
    const { writeTinyGguf } = await import('../../test/fixtures/tiny-gguf.ts');
    const shared = resolve(import.meta.dirname, '../../../shared/models/stories260K.gguf');
    const tmp = await mkdtemp(join(tmpdir(), 'brier-teacher-openai-'));
    const server = await startCompletionsServer({
      modelPath: existsSync(shared) ? shared : await writeTinyGguf(join(tmp, 'tiny.gguf')),
      apiKey: KEY,
    });
    const teachers = createTeachers([
      {
        id: 'vllm',
        kind: 'openai',
        target: server.url,
        upstreamModel: undefined,
        apiKey: KEY,
        timeoutMs: 60_000,
        concurrency: 1,
        retries: 0,
      },
    ]);
    try {
      const t = teachers.get('vllm');
      assert.ok(t);
      assert.equal(t.kind, 'openai');
      const a = await t.ask(
        toDecisionRequest('Once upon a time there was a cat.', [
          { type: 'noul', instructions: 'Is there a cat?' },
          { type: 'choice', instructions: 'Which animal?', criteria: { cat: null, dog: null } },
        ]),
      );
      assert.equal(a.probabilities.length, 2);
      for (const p of a.probabilities) {
        assert.equal(p.length, 2);
        assert.ok(Math.abs(p.reduce((x, y) => x + y, 0) - 1) < 1e-9);
      }
      assert.equal(t.stats().calls, 1);
    } finally {
      await teachers.close();
      await server.close();
      await rm(tmp, { recursive: true, force: true });
    }
  });
});

describe('a GGUF teacher prompted in its chat template (BRIER_GGUF_PROMPT=chat)', () => {
  test("is prompted so, and reads the chat calibration file, not the plain one's", async () => {
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { writeTinyGguf } = await import('../../test/fixtures/tiny-gguf.ts');
    const { ggufCalibrationKey } = await import('./calibrated.ts');
    const dir = await mkdtemp(join(tmpdir(), 'brier-teacher-chat-'));
    try {
      const model = await writeTinyGguf(join(dir, 'tiny.gguf'));
      const teacher: TeacherConfig = {
        id: 'g',
        kind: 'gguf',
        target: model,
        upstreamModel: undefined,
        apiKey: undefined,
        timeoutMs: 60_000,
        concurrency: 1,
        retries: 0,
      };
      const request = toDecisionRequest('I was charged twice, refund please', [
        { type: 'noul', instructions: 'Is it about money?' },
      ]);
      await writeUniformCalibration(dir, (await ggufCalibrationKey(model)).replace('gguf-', 'ggufchat-'));
      const ask = async (prompt: 'plain' | 'chat', calibrated = true) => {
        const teachers = createTeachers([teacher], {
          gguf: { threads: 1, contextSize: 1024, prompt },
          ...(calibrated ? { calibration: { dir, uncalibrated: 'raw' as const } } : {}),
        });
        try {
          return (await teachers.get('g')?.ask(request))?.probabilities[0];
        } finally {
          await teachers.close();
        }
      };
      assert.deepEqual(await ask('chat'), [0.5, 0.5], 'the chat calibration (alpha 1: uniform) answers');
      const plain = await ask('plain');
      assert.notDeepEqual(plain, [0.5, 0.5], 'the plain prompt has no file here: raw');
      assert.notDeepEqual(await ask('chat', false), plain, 'the chat prompt is another prompt');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
