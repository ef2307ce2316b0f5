import type { ConsoleModel } from './api.ts';

export type ModelCalibration = NonNullable<ConsoleModel['calibration']>;
export type CalibrationRow = ModelCalibration['report'][number];

/** The model page's one-sentence status of a GGUF or upstream model's calibration, in inline Markdown (code spans). */
export function calibrationStatus(c: ModelCalibration): string {
  if (c.calibrated) {
    const when = c.fitted_at ? `, ${c.fitted_at.slice(0, 10)}` : '';
    return `Calibrated per question type on ${c.data?.rows ?? 0} labelled rows (${c.data?.name ?? 'unknown set'})${when}.`;
  }
  if (c.mode === 'raw') return 'Not calibrated: answers are served as the model gives them (`BRIER_UNCALIBRATED=raw`).';
  if (c.mode === 'shrink') {
    return 'Not calibrated: every answer is mixed half and half with the uniform answer. Run `npm run brier -- models calibrate` to fit a calibration.';
  }
  const missing = Object.entries(c.types)
    .filter(([type]) => !c.report.some((r) => r.type === type))
    .map(([type]) => type);
  return `Partly calibrated: ${missing.join(', ') || 'some types'} ${missing.length === 1 ? 'is' : 'are'} mixed half and half with the uniform answer.`;
}

/** Whether a report row is worse than the uniform answer (held out where measured, else as served). */
export function worseThanUniform(r: CalibrationRow): boolean {
  return (r.held_out ?? r.after).brier > r.uniform_brier + 1e-9;
}
