/**
 * `brier models calibrate` on a real small instruct model, ../shared/models/SmolLM2-135M-Instruct.Q4_1.gguf
 * (skipped with a message without ../shared), on a few rows of the shipped calibration set: every
 * source set ends at or below the uniform answer's Brier with its calibration fitted without it
 * (held out), and the engine then serves the model as calibrated. Bounded: 4 rows of six short sets
 * (the full set's numbers are in docs/guide/custom-models.md, measured with the CLI).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCalibrateCommand } from '../../src/cli/calibrate.ts';
import { loadConfig } from '../../src/config.ts';
import type { CalibrationReportRow } from '../../src/engines/calibrated.ts';
import { createEngine } from '../../src/engines/create.ts';
import { SMOLLM2 } from '../fixtures/shared-models.ts';

const SETS = 'sms_spam,caldec_noul,goemotions_ekman,caldec_choice,caldec_score,onestop_english';

describe('calibrating SmolLM2-135M-Instruct on the shipped set', {
  skip: existsSync(SMOLLM2) ? false : `${SMOLLM2} is absent (../shared)`,
}, () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'brier-smollm2-calibration-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('no source set is worse than uniform held out, and the engine serves it calibrated', async (t) => {
    const env = { BRIER_DATA_DIR: dir, BRIER_MODEL: SMOLLM2, BRIER_THREADS: '1' };
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCalibrateCommand(['--per-set', '4', '--sets', SETS], loadConfig(env), {
      stdout: (l) => out.push(l),
      stderr: (l) => err.push(l),
    });
    assert.equal(code, 0, err.join('\n'));
    t.diagnostic(out.join('\n'));
    const written = /wrote (\S+):/.exec(out.join('\n'))?.[1] ?? '';
    const file = JSON.parse(readFileSync(written, 'utf8')) as { report: CalibrationReportRow[] };
    assert.equal(file.report.length, 3 + 6);
    for (const row of file.report) {
      assert.ok(row.held_out, `${row.type}/${row.set}: measured held out`);
      assert.ok(
        row.held_out.brier <= row.uniform_brier + 1e-9,
        `${row.type}/${row.set ?? 'all'}: held out ${row.held_out.brier} > uniform ${row.uniform_brier}`,
      );
      assert.ok(row.after.brier <= row.uniform_brier + 1e-9);
    }
    const engine = await createEngine(loadConfig(env));
    try {
      await engine.load();
      assert.equal(engine.calibration?.calibrated, true);
    } finally {
      await engine.close();
    }
  });
});
