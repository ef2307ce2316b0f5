import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { calibrationFileOf } from '../../test/fixtures/model-calibration.ts';
import { writeTinyGguf } from '../../test/fixtures/tiny-gguf.ts';
import {
  applyModelCalibration,
  calibrationPath,
  ggufCalibrationKey,
  type ModelCalibrationFile,
  readModelCalibration,
  resolveModelCalibration,
  serverCalibrationKey,
  sourceCalibrationKey,
  UNCALIBRATED_SHRINK,
  withModelCalibration,
} from './calibrated.ts';
import type { DecisionEngine } from './engine.ts';
import type { DecisionRequest } from './request.ts';

const KEY = `gguf-${'a'.repeat(64)}`;
const signal = () => new AbortController().signal;

function file(types: ModelCalibrationFile['types'], key = KEY): ModelCalibrationFile {
  return calibrationFileOf(types, key);
}

/** An engine answering fixed raw probabilities per question type. */
function fixedEngine(): DecisionEngine {
  let loaded = false;
  const raw = { noul: [0.1, 0.9], choice: [0.8, 0.1, 0.1], score: [0.05, 0.05, 0.9] };
  return {
    info: { id: 'brier-test-3.0.0', description: 'fixed', releaseDate: '2026-11-28' },
    limits: { contextTokens: 100, inputTokens: 100 },
    async load() {
      loaded = true;
    },
    ready: () => loaded,
    async countTokens(r) {
      return { state: 1, questions: r.questions.map(() => 1) };
    },
    async answer(r) {
      return { probabilities: r.questions.map((q) => raw[q.type]), inputTokens: 1, outputTokens: 1 };
    },
    async close() {
      loaded = false;
    },
  };
}

const opts = (labels: string[]) => labels.map((label) => ({ label, description: null }));
const REQUEST: DecisionRequest = {
  state: { text: 'x', json: undefined },
  questions: [
    { type: 'noul', instructions: null, options: opts(['false', 'true']) },
    { type: 'choice', instructions: null, options: opts(['a', 'b', 'c']) },
    { type: 'score', instructions: null, options: opts(['0', '1', '2']) },
  ],
};

const close = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((x, i) => Math.abs(x - (b[i] ?? 0)) < 1e-9);

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'brier-calibrated-'));
});
after(() => rm(dir, { recursive: true, force: true }));

describe('model calibration (GGUF and upstream engines)', () => {
  test('a (T, alpha) map sharpens or softens by temperature and mixes with the uniform answer', () => {
    assert.ok(close(applyModelCalibration([0.9, 0.1], { temperature: 1, alpha: 0.5 }), [0.7, 0.3]));
    assert.ok(close(applyModelCalibration([0.9, 0.1], { temperature: 1, alpha: 1 }), [0.5, 0.5]));
    const soft = applyModelCalibration([0.9, 0.1], { temperature: 2, alpha: 0 });
    assert.ok(close(soft, [0.75, 0.25]), `T=2: ${soft}`);
    assert.deepEqual(applyModelCalibration([0.9, 0.1], null), [0.9, 0.1]);
    // zeros (an upstream's 2-decimal answers) stay finite
    const z = applyModelCalibration([1, 0], { temperature: 3, alpha: 0.1 });
    assert.ok(z.every(Number.isFinite) && close([z.reduce((a, b) => a + b, 0)], [1]));
  });

  test('without a file: shrink mixes every answer half and half with uniform and says it is not calibrated', async () => {
    const engine = withModelCalibration(fixedEngine(), { dir, key: async () => KEY });
    assert.equal(engine.ready(), false);
    await engine.load();
    assert.equal(engine.ready(), true);
    assert.equal(engine.calibration?.calibrated, false);
    assert.equal(engine.calibration?.mode, 'shrink');
    assert.deepEqual(engine.calibration?.types.noul, UNCALIBRATED_SHRINK);
    const { probabilities } = await engine.answer(REQUEST, signal());
    assert.ok(close(probabilities[0] ?? [], [0.3, 0.7]), `${probabilities[0]}`);
    assert.ok(close(probabilities[1] ?? [], [0.4 + 1 / 6, 0.05 + 1 / 6, 0.05 + 1 / 6]));
    await engine.close();
    assert.equal(engine.calibration, null);
  });

  test('without a file, raw: answers as they come', async () => {
    const engine = withModelCalibration(fixedEngine(), { dir, key: async () => KEY, uncalibrated: 'raw' });
    await engine.load();
    assert.equal(engine.calibration?.mode, 'raw');
    assert.equal(engine.calibration?.calibrated, false);
    assert.deepEqual((await engine.answer(REQUEST, signal())).probabilities[2], [0.05, 0.05, 0.9]);
  });

  test("a fitted file is read at load by the model's key and applied per question type", async () => {
    const sub = await mkdtemp(join(dir, 'fitted-'));
    const fitted = file({
      noul: { temperature: 1, alpha: 0, alpha_floor: 0 },
      choice: { temperature: 1, alpha: 1, alpha_floor: 1 },
      score: { temperature: 2, alpha: 0, alpha_floor: 0 },
    });
    await writeFile(calibrationPath(sub, KEY), JSON.stringify(fitted));
    const engine = withModelCalibration(fixedEngine(), { dir: sub, key: async () => KEY });
    await engine.load();
    assert.equal(engine.calibration?.calibrated, true);
    assert.equal(engine.calibration?.mode, 'fitted');
    assert.equal(engine.info.id, 'brier-test-3.0.0');
    const [noul, choice, score] = (await engine.answer(REQUEST, signal())).probabilities;
    assert.ok(close(noul ?? [], [0.1, 0.9]));
    assert.ok(close(choice ?? [], [1 / 3, 1 / 3, 1 / 3]));
    const s = [0.05 ** 0.5, 0.05 ** 0.5, 0.9 ** 0.5];
    const sum = s.reduce((a, b) => a + b, 0);
    assert.ok(
      close(
        score ?? [],
        s.map((v) => v / sum),
      ),
    );
  });

  test('a type the file lacks is shrunk, and the model is then not called calibrated', () => {
    const partial = resolveModelCalibration(
      KEY,
      file({ noul: { temperature: 1.5, alpha: 0.1, alpha_floor: 0 } }),
      'shrink',
    );
    assert.equal(partial.calibrated, false);
    assert.equal(partial.mode, 'fitted');
    assert.deepEqual(partial.types.noul, { temperature: 1.5, alpha: 0.1 });
    assert.deepEqual(partial.types.choice, UNCALIBRATED_SHRINK);
  });

  test('a malformed, oversized or mismatched file refuses to load, naming the file', async () => {
    const sub = await mkdtemp(join(dir, 'bad-'));
    const path = calibrationPath(sub, KEY);
    assert.equal(await readModelCalibration(sub, KEY), null);
    await writeFile(path, '{not json');
    await assert.rejects(readModelCalibration(sub, KEY), new RegExp(`${path}: not JSON`));
    await writeFile(path, JSON.stringify({ ...file({}), format: 'other' }));
    await assert.rejects(readModelCalibration(sub, KEY), /not a calibration file/);
    await writeFile(path, JSON.stringify(file({ noul: { temperature: -1, alpha: 0, alpha_floor: 0 } })));
    await assert.rejects(readModelCalibration(sub, KEY), /not a calibration file/);
    await writeFile(path, JSON.stringify(file({}, `gguf-${'c'.repeat(64)}`)));
    await assert.rejects(readModelCalibration(sub, KEY), /fitted for gguf-c+, not gguf-a+/);
    await writeFile(path, ' '.repeat((1 << 20) + 1));
    await assert.rejects(readModelCalibration(sub, KEY), /a calibration file has at most/);
    const engine = withModelCalibration(fixedEngine(), { dir: sub, key: async () => KEY });
    await assert.rejects(engine.load(), /a calibration file has at most/);
    assert.throws(() => calibrationPath(sub, '../../etc/passwd'), /not <kind>-<sha256>/);
  });

  test("keys: a GGUF file's sha256; a server's URL and model", async () => {
    const path = await writeTinyGguf(join(dir, 'tiny.gguf'));
    const sha = createHash('sha256')
      .update(await readFile(path))
      .digest('hex');
    assert.equal(await ggufCalibrationKey(path), `gguf-${sha}`);
    // kept by path, size and mtime: a second start does not read the file again
    const cacheDir = join(dir, 'hash-cache');
    assert.equal(await ggufCalibrationKey(path, cacheDir), `gguf-${sha}`);
    const cached = JSON.parse(await readFile(join(cacheDir, 'hashes.json'), 'utf8'));
    const [entry] = Object.values(cached) as { sha256: string }[];
    assert.equal(entry?.sha256, sha);
    const [file] = Object.keys(cached);
    await writeFile(
      join(cacheDir, 'hashes.json'),
      JSON.stringify({ [file ?? '']: { ...entry, sha256: 'f'.repeat(64) } }),
    );
    assert.equal(await ggufCalibrationKey(path, cacheDir), `gguf-${'f'.repeat(64)}`, 'read from the cache');
    await writeFile(path, Buffer.concat([await readFile(path), Buffer.from([0])]));
    assert.notEqual(
      await ggufCalibrationKey(path, cacheDir),
      `gguf-${'f'.repeat(64)}`,
      'hashed again once the file changed',
    );
    // the same file prompted in its chat template has a calibration of its own
    const plain = await sourceCalibrationKey({ kind: 'gguf', path }, dir)();
    assert.match(plain, /^gguf-[0-9a-f]{64}$/);
    assert.equal(await sourceCalibrationKey({ kind: 'gguf', path, prompt: 'plain' }, dir)(), plain);
    const chat = await sourceCalibrationKey({ kind: 'gguf', path, prompt: 'chat' }, dir)();
    assert.equal(chat, plain.replace('gguf-', 'ggufchat-'));
    assert.equal(calibrationPath(dir, chat), join(dir, `${chat}.json`));
    const a = serverCalibrationKey('openai', 'http://127.0.0.1:8000', 'm1');
    assert.match(a, /^openai-[0-9a-f]{64}$/);
    assert.notEqual(a, serverCalibrationKey('openai', 'http://127.0.0.1:8000', 'm2'));
    assert.notEqual(a, serverCalibrationKey('upstream', 'http://127.0.0.1:8000', 'm1'));
  });
});
