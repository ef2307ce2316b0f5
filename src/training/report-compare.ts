/**
 * Two training reports (models/brier-lite/report.json) side by side: every number of the model card
 * measured held out by source set (leave-tasks-out per type, each set left out, the shipped model on
 * the sets it never saw, CalDec, the skill model's answers per set and pooled, the zero-shot maps
 * pooled), Brier and ECE of each, with the difference. `npm run train:compare` prints it (issue 40:
 * the int8 encoders' refit against the float32 model).
 */

interface Metrics {
  brier: number;
  ece: number;
}

export interface ComparedRow {
  name: string;
  before: Metrics;
  after: Metrics;
}

type Json = Record<string, unknown>;
const TYPES = ['noul', 'choice', 'score'] as const;

function metricsAt(report: Json, path: readonly string[]): Metrics | null {
  let at: unknown = report;
  for (const key of path) at = at && typeof at === 'object' ? (at as Json)[key] : undefined;
  const m = at as Partial<Metrics> | undefined;
  return m && typeof m.brier === 'number' && typeof m.ece === 'number' ? { brier: m.brier, ece: m.ece } : null;
}

/** Named [path] of every held-out number in a report (per type, per set, skill and zero-shot rows). */
function heldOutNumbers(report: Json): Map<string, Metrics> {
  const out = new Map<string, Metrics>();
  const put = (name: string, m: Metrics | null) => {
    if (m) out.set(name, m);
  };
  for (const t of TYPES) {
    put(`leave-tasks-out ${t}`, metricsAt(report, ['leaveTasksOut', t, 'model']));
    put(`held-out sets, shipped model ${t}`, metricsAt(report, ['heldOutTasksShipped', t, 'model']));
    put(`CalDec ${t}`, metricsAt(report, ['caldec', t, 'model']));
  }
  for (const set of Object.keys((report.perTask as Json | undefined) ?? {}).sort())
    put(`set left out: ${set}`, metricsAt(report, ['perTask', set, 'leaveTaskOut', 'model']));
  const skill = (report.skill as Json | undefined) ?? {};
  for (const group of ['pooled', 'sets', 'caldec'] as const) {
    for (const row of (skill[group] as Json[] | undefined) ?? []) {
      if (typeof row.brier === 'number' && typeof row.ece === 'number')
        out.set(`skill ${group === 'pooled' ? '' : `${group} `}${String(row.name)}`, {
          brier: row.brier,
          ece: row.ece,
        });
    }
  }
  const zeroShot = ((report.zeroShot as Json | undefined)?.pooled as Json[] | undefined) ?? [];
  for (const row of zeroShot) {
    if (typeof row.brier === 'number' && typeof row.ece === 'number')
      out.set(`zero-shot map ${String(row.map)} (${String(row.source)}, ${String(row.kind)})`, {
        brier: row.brier,
        ece: row.ece,
      });
  }
  return out;
}

/** The rows both reports measured, in the first report's order. */
export function compareReports(before: Json, after: Json): ComparedRow[] {
  const a = heldOutNumbers(before);
  const b = heldOutNumbers(after);
  return [...a].flatMap(([name, m]) => {
    const n = b.get(name);
    return n ? [{ name, before: m, after: n }] : [];
  });
}

export interface ComparisonSummary {
  rows: number;
  withinBrier: number;
  withinEce: number;
  maxBrier: { name: string; delta: number };
  maxEce: { name: string; delta: number };
}

/** How many rows move by at most `brierTolerance` / `eceTolerance`, and the largest moves. */
export function summarize(rows: ComparedRow[], brierTolerance = 0.003, eceTolerance = 0.005): ComparisonSummary {
  const largest = (f: (r: ComparedRow) => number) =>
    rows.reduce((best, r) => (Math.abs(f(r)) > Math.abs(best.delta) ? { name: r.name, delta: f(r) } : best), {
      name: '-',
      delta: 0,
    });
  const dBrier = (r: ComparedRow) => r.after.brier - r.before.brier;
  const dEce = (r: ComparedRow) => r.after.ece - r.before.ece;
  return {
    rows: rows.length,
    withinBrier: rows.filter((r) => Math.abs(dBrier(r)) <= brierTolerance).length,
    withinEce: rows.filter((r) => Math.abs(dEce(r)) <= eceTolerance).length,
    maxBrier: largest(dBrier),
    maxEce: largest(dEce),
  };
}

/** A markdown table: name, Brier before / after / change, ECE before / after / change. */
export function comparisonTable(rows: ComparedRow[], labels: [string, string]): string {
  const f = (x: number) => x.toFixed(4);
  const d = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(4)}`;
  return [
    `| held out | Brier ${labels[0]} | Brier ${labels[1]} | change | ECE ${labels[0]} | ECE ${labels[1]} | change |`,
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${f(r.before.brier)} | ${f(r.after.brier)} | ${d(r.after.brier - r.before.brier)} | ${f(r.before.ece)} | ${f(r.after.ece)} | ${d(r.after.ece - r.before.ece)} |`,
    ),
  ].join('\n');
}
