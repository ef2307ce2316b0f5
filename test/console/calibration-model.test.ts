import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type CalibrationRow,
  calibrationStatus,
  type ModelCalibration,
  worseThanUniform,
} from '../../console/src/calibration-model.ts';
import { parseInline } from '../../console/src/markdown.ts';

const metrics = (brier: number) => ({ n: 4, accuracy: 0.5, brier, nll: 0.7, ece: 0.1, ece_floor: 0.1 });
const row = (type: string, before: number, after: number, held: number | null): CalibrationRow => ({
  type,
  set: 'a',
  n: 4,
  uniform_brier: 0.25,
  before: metrics(before),
  after: metrics(after),
  held_out: held === null ? null : metrics(held),
});
const base: ModelCalibration = {
  calibrated: true,
  mode: 'fitted',
  key: `gguf-${'a'.repeat(64)}`,
  types: { noul: { temperature: 1.2, alpha: 0.3 }, choice: { temperature: 1, alpha: 0.5 }, score: null },
  fitted_at: '2026-11-28T12:00:00.000Z',
  data: { source: 'shipped', name: 'models/calibration-set/calibration-set.jsonl', sha256: 'b', rows: 360 },
  report: [row('noul', 0.3, 0.24, 0.249)],
};

test('the model page says whether and how a custom model is calibrated', () => {
  assert.equal(
    calibrationStatus(base),
    'Calibrated per question type on 360 labelled rows (models/calibration-set/calibration-set.jsonl), 2026-11-28.',
  );
  assert.match(
    calibrationStatus({ ...base, calibrated: false, mode: 'shrink', report: [] }),
    /mixed half and half.*models calibrate/,
  );
  assert.match(
    calibrationStatus({ ...base, calibrated: false, mode: 'raw', report: [] }),
    /served as the model gives them/,
  );
  assert.equal(
    calibrationStatus({ ...base, calibrated: false }),
    'Partly calibrated: choice, score are mixed half and half with the uniform answer.',
  );
});

test('a report row is worse than uniform by its held-out Brier where measured', () => {
  assert.equal(worseThanUniform(row('noul', 0.3, 0.24, 0.249)), false);
  assert.equal(worseThanUniform(row('noul', 0.3, 0.24, 0.26)), true);
  assert.equal(worseThanUniform(row('noul', 0.3, 0.26, null)), true);
});

test('the status is inline Markdown: its commands and settings are code spans, so the page shows no backticks', () => {
  const spans = (c: ModelCalibration) =>
    parseInline(calibrationStatus(c)).flatMap((n) => (n.kind === 'code' ? [n.text] : []));
  assert.deepEqual(spans({ ...base, calibrated: false, mode: 'shrink', report: [] }), [
    'npm run brier -- models calibrate',
  ]);
  assert.deepEqual(spans({ ...base, calibrated: false, mode: 'raw', report: [] }), ['BRIER_UNCALIBRATED=raw']);
  for (const mode of ['fitted', 'shrink', 'raw'] as const) {
    const text = parseInline(calibrationStatus({ ...base, calibrated: mode === 'fitted', mode, report: [] }))
      .map((n) => ('text' in n ? n.text : ''))
      .join('');
    assert.ok(!text.includes('`'), text);
  }
});
