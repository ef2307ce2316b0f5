/**
 * The calibration of live answers, from recorded outcomes (each keeps the answer that was served for
 * it): per question template, accuracy, Brier and ECE overall and by week, reliability bins, and
 * whether the most recent outcomes show drift past the documented threshold (DRIFT).
 */
import { brierScore, confidencePairs, ece, eceNoiseFloor, reliability } from '../lib/scoring.ts';
import type { ServedOutcome } from './examples.ts';

/**
 * Drift: the last `window` outcomes of a template (at least `minOutcomes` of them) have an ECE above
 * `ece` and above `floorFactor` times its chance floor (the ECE a perfectly calibrated model shows by
 * chance at those confidences and that many outcomes).
 */
export const DRIFT = { window: 50, minOutcomes: 30, ece: 0.1, floorFactor: 2 } as const;

export interface CalibrationMetrics {
  n: number;
  accuracy: number;
  brier: number;
  ece: number;
  eceFloor: number;
}

export interface TemplateCalibration {
  templateId: string;
  overall: CalibrationMetrics;
  reliability: ReturnType<typeof reliability>;
  /** UTC weeks starting on Monday, oldest first, only weeks with outcomes. */
  weekly: (CalibrationMetrics & { week: string })[];
  recent: CalibrationMetrics | null;
  drifted: boolean;
  /** Why drifted or not, in a sentence. */
  reason: string;
  /** Models (base or adapter ids) that served these answers. */
  servedBy: string[];
}

function measure(items: { p: number[]; t: number[] }[]): CalibrationMetrics {
  const pairs = confidencePairs(items);
  const n = items.length;
  return {
    n,
    accuracy: pairs.length ? pairs.reduce((a, x) => a + x.correct, 0) / pairs.length : 0,
    brier: n ? items.reduce((a, x) => a + brierScore(x.p, x.t), 0) / n : 0,
    ece: ece(pairs),
    eceFloor: eceNoiseFloor(pairs.map((x) => x.confidence)),
  };
}

/** Monday 00:00 UTC of the week of `ms`, as YYYY-MM-DD. */
function weekOf(ms: number): string {
  const day = new Date(ms);
  const offset = (day.getUTCDay() + 6) % 7;
  const monday = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate()) - offset * 86_400_000;
  return new Date(monday).toISOString().slice(0, 10);
}

/** The report of each template in `labels` (canonical class lists by template id) that has outcomes. */
export function calibrationReport(
  outcomes: readonly ServedOutcome[],
  labels: ReadonlyMap<string, readonly string[]>,
): TemplateCalibration[] {
  const byTemplate = new Map<string, ServedOutcome[]>();
  for (const o of outcomes) byTemplate.set(o.templateId, [...(byTemplate.get(o.templateId) ?? []), o]);
  const out: TemplateCalibration[] = [];
  for (const [templateId, list] of byTemplate) {
    const classes = labels.get(templateId);
    if (!classes) continue;
    const items = list
      .map((o) => {
        const y = classes.indexOf(o.label);
        const t = classes.map((_, i) => (i === y ? 1 : 0));
        return { o, p: o.served, t, ok: y >= 0 && o.served.length === classes.length };
      })
      .filter((x) => x.ok);
    if (items.length === 0) continue;
    const weeks = new Map<string, typeof items>();
    for (const it of items) {
      const w = weekOf(it.o.createdAt);
      weeks.set(w, [...(weeks.get(w) ?? []), it]);
    }
    const recentItems = items.slice(-DRIFT.window);
    const recent = recentItems.length >= DRIFT.minOutcomes ? measure(recentItems) : null;
    const limit = recent ? Math.max(DRIFT.ece, DRIFT.floorFactor * recent.eceFloor) : 0;
    const drifted = recent !== null && recent.ece > limit;
    const reason = !recent
      ? `${items.length} outcomes; drift is judged on the last ${DRIFT.window} once there are ${DRIFT.minOutcomes}`
      : drifted
        ? `drifted: the last ${recent.n} outcomes have ECE ${recent.ece.toFixed(3)}, above ${limit.toFixed(3)} (the larger of ${DRIFT.ece} and ${DRIFT.floorFactor} x its chance floor ${recent.eceFloor.toFixed(3)}); retrain on the outcomes`
        : `calibrated: the last ${recent.n} outcomes have ECE ${recent.ece.toFixed(3)}, within ${limit.toFixed(3)}`;
    out.push({
      templateId,
      overall: measure(items),
      reliability: reliability(confidencePairs(items)),
      weekly: [...weeks].sort(([a], [b]) => (a < b ? -1 : 1)).map(([week, w]) => ({ week, ...measure(w) })),
      recent,
      drifted,
      reason,
      servedBy: [...new Set(items.map((x) => x.o.servedBy))],
    });
  }
  return out;
}
