/**
 * `brier models calibrate` end to end on the tiny generated GGUF (random weights: these tests check
 * the mechanics, never quality): the model is run on a few rows of the shipped set, the report is
 * printed, the calibration file is written under its sha256 key, a second run reuses the kept
 * answers, and an engine created for the same model reads the file and says so in /v1/models and on
 * the model page.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { writeTinyGguf } from '../../test/fixtures/tiny-gguf.ts';
import { makeTestApp, signedInClient } from '../../test/harness.ts';
import { loadConfig } from '../config.ts';
import { ggufCalibrationKey } from '../engines/calibrated.ts';
import { createEngine } from '../engines/create.ts';
import { runCalibrateCommand } from './calibrate.ts';

const SETS = 'sms_spam,caldec_noul,goemotions_ekman,caldec_choice,caldec_score,onestop_english';

let dir = '';
let model = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'brier-calibrate-cli-'));
  model = await writeTinyGguf(join(dir, 'tiny.gguf'));
});
after(() => rm(dir, { recursive: true, force: true }));

async function run(argv: string[], env: Record<string, string> = {}, clock?: () => number) {
  const config = loadConfig({ BRIER_DATA_DIR: join(dir, 'data'), BRIER_THREADS: '1', ...env });
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCalibrateCommand(argv, config, {
    stdout: (l) => out.push(l),
    stderr: (l) => err.push(l),
    ...(clock ? { clock } : {}),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('brier models calibrate', () => {
  test('fits a GGUF model on the shipped set, prints before/after, and writes the file by sha256', async () => {
    const { code, out, err } = await run(['--model', model, '--per-set', '2', '--sets', SETS]);
    assert.equal(code, 0, err);
    assert.match(err, /12 rows \(12 to ask the model, 0 kept/);
    for (const set of SETS.split(',')) assert.match(out, new RegExp(`\\s${set}\\s+2\\s`), set);
    assert.match(out, /brier: before\s+after\s+held/);
    assert.match(out, /noul: temperature [\d.]+, uniform weight [\d.]+ \(floor [\d.]+\)/);
    const key = await ggufCalibrationKey(model);
    const path = join(dir, 'data', 'calibration', `${key}.json`);
    assert.match(out, new RegExp(`wrote ${path}`));
    const file = JSON.parse(readFileSync(path, 'utf8'));
    assert.equal(file.model.key, key);
    assert.equal(file.data.source, 'shipped');
    assert.equal(file.data.rows, 12);
    assert.deepEqual(Object.keys(file.types).sort(), ['choice', 'noul', 'score']);
    for (const row of file.report) {
      // random weights: whatever it answers, no set is left worse than uniform, held out
      assert.ok((row.held_out ?? row.after).brier <= row.uniform_brier + 1e-9, `${row.type}/${row.set}`);
    }
    assert.ok(existsSync(join(dir, 'data', 'calibration', `${key}.answers.jsonl`)));

    const again = await run(['--model', model, '--per-set', '2', '--sets', SETS, '--dry-run']);
    assert.equal(again.code, 0, again.err);
    assert.match(again.err, /12 rows \(0 to ask the model, 12 kept from an earlier run\)/);
    assert.match(again.out, /dry run: .* not written/);
  });

  test('kept answers are reused only for the same row and temperature: an edited row is asked again', async () => {
    const rows = ['a', 'b'].flatMap((set) =>
      [0, 1].map((i) => ({
        id: `${set}/${i}`,
        set,
        state: `message ${set} ${i}`,
        question: { type: 'noul', instructions: 'Is this text message spam?', criteria: null },
        label: i === 0,
      })),
    );
    const own = join(dir, 'own.jsonl');
    const write = (list: typeof rows) => writeFileSync(own, `${list.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const other = await writeTinyGguf(join(dir, 'edited.gguf'), { seed: 3 });
    write(rows);
    const first = await run(['--model', other, '--set', own]);
    assert.equal(first.code, 0, first.err);
    assert.match(first.err, /4 rows \(4 to ask the model, 0 kept/);
    write(rows.map((r) => (r.id === 'b/1' ? { ...r, state: 'an edited message' } : r)));
    const edited = await run(['--model', other, '--set', own, '--dry-run']);
    assert.match(edited.err, /4 rows \(1 to ask the model, 3 kept from an earlier run\)/);
    const hotter = await run(['--model', other, '--set', own, '--dry-run'], { BRIER_MODEL_TEMPERATURE: '2' });
    assert.match(hotter.err, /4 rows \(4 to ask the model, 0 kept/);
  });

  test('prints a time estimate: a stated default before the model runs, then the measured rate after 3 rows', async () => {
    const own = join(dir, 'eta.jsonl');
    const rows = ['a', 'b'].flatMap((set) =>
      Array.from({ length: 11 }, (_, i) => ({
        id: `${set}/${i}`,
        set,
        state: `message ${set} ${i}`,
        question: { type: 'noul', instructions: 'Is this text message spam?', criteria: null },
        label: i % 2 === 0,
      })),
    );
    writeFileSync(own, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    // A clock that moves 2 s each time it is read: 2 s a row, whatever the machine.
    let ms = 0;
    const clock = () => {
      ms += 2000;
      return ms;
    };
    const { code, err } = await run(['--model', model, '--set', own, '--dry-run'], {}, clock);
    assert.equal(code, 0, err);
    assert.match(
      err,
      /estimate: about 2 min at 4\.9 s a row \(a stated default: SmolLM2-135M-Instruct on one CPU thread; measured on this model after 3 rows\)/,
    );
    assert.match(err, /measured: 2\.00 s a row over the first 3 rows; about 38 s for the 19 left/);
    assert.match(err, /20\/22 rows, 40 s, about 4 s left/);
    assert.match(err, /22\/22 rows, 44 s$/);
    const kept = await run(['--model', model, '--per-set', '2', '--sets', SETS, '--dry-run']);
    assert.doesNotMatch(kept.err, /estimate:/, 'nothing to ask: no estimate');
  });

  test('the engine for that model reads the file: x_calibrated in /v1/models, before/after on the model page', async () => {
    const engine = await createEngine(
      loadConfig({ BRIER_DATA_DIR: join(dir, 'data'), BRIER_MODEL: model, BRIER_THREADS: '1' }),
    );
    const t = await makeTestApp({ engine });
    try {
      assert.equal(engine.calibration?.mode, 'fitted');
      const models = await (await t.req('/v1/models')).json();
      assert.equal(models.models[0].x_calibrated, true);
      const page = await (await (await signedInClient(t)).request('/control/v1/model')).json();
      assert.equal(page.calibration.calibrated, true);
      assert.equal(page.calibration.data.rows, 12);
      assert.equal(page.calibration.report.length, 3 + SETS.split(',').length);
      assert.ok(page.calibration.report.every((r: { before: { brier: number } }) => r.before.brier >= 0));
      const res = await t.req('/v1/systemone', {
        body: { state: 'hello', questions: { q: { type: 'noul', instructions: 'Is it spam?' } } },
      });
      assert.equal(res.status, 200);
    } finally {
      await t.close();
    }
  });

  test('a model without a file is served shrunk and says x_calibrated false', async () => {
    const other = await writeTinyGguf(join(dir, 'other.gguf'), { seed: 2 });
    const engine = await createEngine(
      loadConfig({ BRIER_DATA_DIR: join(dir, 'data'), BRIER_MODEL: other, BRIER_THREADS: '1' }),
    );
    const t = await makeTestApp({ engine });
    try {
      assert.equal((await (await t.req('/v1/models')).json()).models[0].x_calibrated, false);
      const page = await (await (await signedInClient(t)).request('/control/v1/model')).json();
      assert.equal(page.calibration.mode, 'shrink');
      assert.deepEqual(page.calibration.report, []);
    } finally {
      await t.close();
    }
  });

  test('the embedded model and the test engine need no calibration (x_calibrated true, no section)', async () => {
    const { code, err } = await run([]);
    assert.equal(code, 2);
    assert.match(err, /needs no calibration file/);
    const t = await makeTestApp();
    try {
      assert.equal((await (await t.req('/v1/models')).json()).models[0].x_calibrated, true);
      assert.equal((await (await (await signedInClient(t)).request('/control/v1/model')).json()).calibration, null);
    } finally {
      await t.close();
    }
  });

  test('bad usage exits 2 naming the option', async () => {
    const bad = await run(['--model', model, '--per-set', '0']);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--per-set: a whole number from 1 to 100000, got 0/);
    const unknown = await run(['--bogus']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /bogus/);
    const missing = await run(['--model', model, '--set', join(dir, 'nope.jsonl')]);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /nope\.jsonl: no such file/);
  });
});
