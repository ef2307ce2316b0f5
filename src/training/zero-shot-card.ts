/**
 * The zero-shot families' numbers (issue 31) for report.json and the model card: per map and source
 * set, held out by source set, against the issue's targets, with the coherence suite and the
 * paraphrase suite beside them.
 */
import type { ParaphraseReport, ZeroShotReport, ZeroShotRow } from '../engines/embedded/artifacts.ts';
import type { CoherenceReport } from './coherence.ts';
import { asServed, computeMetrics, confidencePairs, eceNoiseFloor, oneHot } from './evaluation.ts';
import { MAPS, type MapName, type ZeroShotFit } from './zero-shot-fit.ts';

/** Area under the ROC curve of scores for binary labels (ties count half); null without both classes. */
export function auc(scores: readonly number[], labels: readonly number[]): number | null {
  const idx = scores.map((s, i) => ({ s, y: labels[i] ?? 0 })).sort((a, b) => a.s - b.s);
  let pos = 0;
  let rankSum = 0;
  for (let i = 0; i < idx.length; ) {
    let j = i;
    while (j < idx.length && idx[j]?.s === idx[i]?.s) j++;
    const rank = (i + j + 1) / 2;
    for (let k = i; k < j; k++)
      if (idx[k]?.y) {
        rankSum += rank;
        pos++;
      }
    i = j;
  }
  const neg = idx.length - pos;
  if (pos === 0 || neg === 0) return null;
  return (rankSum - (pos * (pos + 1)) / 2) / (pos * neg);
}

const r4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** An answer counts as informative where some probability is more than 0.005 from uniform. */
export function informative(p: readonly number[]): boolean {
  return p.some((v) => Math.abs(v - 1 / p.length) > 0.005);
}

function rowOf(
  map: MapName,
  source: string,
  kind: string,
  answers: readonly { p: number[]; target: number }[],
): ZeroShotRow {
  const items = answers.map((a) => ({ p: asServed(a.p), t: oneHot(a.p.length, a.target) }));
  const m = computeMetrics(items);
  const uniform = computeMetrics(items.map((it) => ({ p: it.p.map(() => 1 / it.p.length), t: it.t })));
  const counts = new Map<number, number>();
  for (const a of answers) counts.set(a.target, (counts.get(a.target) ?? 0) + 1);
  const k = answers[0]?.p.length ?? 2;
  const a =
    k === 2
      ? auc(
          answers.map((x) => x.p[1] ?? 0),
          answers.map((x) => x.target),
        )
      : null;
  return {
    map,
    source,
    kind,
    n: answers.length,
    auc: a === null ? null : r4(a),
    accuracy: r4(m.accuracy),
    prior: r4(Math.max(0, ...counts.values()) / Math.max(1, answers.length)),
    brier: r4(m.brier),
    uniformBrier: r4(uniform.brier),
    ece: r4(m.ece),
    eceFloor: r4(eceNoiseFloor(confidencePairs(items).map((c) => c.confidence))),
    informative: r4(answers.filter((x) => informative(x.p)).length / Math.max(1, answers.length)),
  };
}

/** Every map's held-out numbers per source set and kind of question, and pooled; the negation pairs. */
export function zeroShotReport(fit: ZeroShotFit): ZeroShotReport {
  const kindOf = new Map(fit.items.map((it) => [it.id, it.kind]));
  const rows: ZeroShotRow[] = [];
  const pooled: ZeroShotRow[] = [];
  let pairs = 0;
  let within = 0;
  for (const map of Object.keys(MAPS) as MapName[]) {
    const held = fit.fits[map].heldOut;
    const plain = held.filter((h) => !h.item.negated);
    const groups = new Map<string, { p: number[]; target: number }[]>();
    for (const h of plain) {
      const key = `${h.item.source}\u0000${kindOf.get(h.item.id) ?? '?'}`;
      groups.set(key, [...(groups.get(key) ?? []), { p: h.p, target: h.item.target }]);
    }
    for (const [key, answers] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
      const [source = '', kind = ''] = key.split('\u0000');
      rows.push(rowOf(map, source, kind, answers));
    }
    pooled.push(
      rowOf(
        map,
        'pooled',
        'all',
        plain.map((h) => ({ p: h.p, target: h.item.target })),
      ),
    );
    const plainOf = new Map(plain.filter((h) => h.item.pair).map((h) => [h.item.pair, h.p]));
    for (const h of held) {
      if (!h.item.negated) continue;
      const p = plainOf.get(h.item.pair);
      if (!p) continue;
      pairs++;
      if (Math.abs((h.p[1] ?? 0) - (1 - (p[1] ?? 0))) <= 0.05) within++;
    }
  }
  const maps = Object.fromEntries(
    (Object.keys(MAPS) as MapName[]).map((m) => [m, { ...fit.fits[m].map, families: [...MAPS[m].families] }]),
  ) as ZeroShotReport['maps'];
  return { maps, rows, pooled, negation: { pairs, within } };
}

/** A target of issue 31 with its measured number. */
export interface Target {
  name: string;
  measured: string;
  met: boolean;
}

const f = (x: number | null | undefined, d = 3) => (x === null || x === undefined ? '-' : x.toFixed(d));

export function targets(
  z: ZeroShotReport,
  coherence: CoherenceReport | null,
  paraphrase: ParaphraseReport | null,
  heldOutChoice: { task: string; accuracy: number; brier: number }[],
  baseline: Record<string, { accuracy: number; brier: number }>,
): Target[] {
  const out: Target[] = [];
  const of = (map: MapName) => z.rows.filter((r) => r.map === map);
  const pooled = (map: MapName) => z.pooled.find((r) => r.map === map);
  const content = of('content');
  const meanAuc = (rows: ZeroShotRow[]) => {
    const a = rows.map((r) => r.auc).filter((x): x is number => x !== null);
    return a.reduce((s, x) => s + x, 0) / Math.max(1, a.length);
  };
  const mc = meanAuc(content);
  out.push({ name: 'topic/intent yes/no: mean AUC >= 0.75', measured: f(mc), met: mc >= 0.75 });
  const cp = pooled('content');
  out.push({ name: 'topic/intent yes/no: ECE <= 0.05', measured: f(cp?.ece), met: (cp?.ece ?? 1) <= 0.05 });
  out.push({
    name: 'topic/intent yes/no: informative on >= 80%',
    measured: f(cp?.informative, 2),
    met: (cp?.informative ?? 0) >= 0.8,
  });
  const sentiment = of('polarity').filter((r) => r.kind !== 'emotion');
  const ms = meanAuc(sentiment);
  out.push({ name: 'polarity yes/no (sentiment sets): mean AUC >= 0.80', measured: f(ms), met: ms >= 0.8 });
  const pp = pooled('polarity');
  out.push({ name: 'polarity yes/no: ECE <= 0.05', measured: f(pp?.ece), met: (pp?.ece ?? 1) <= 0.05 });
  out.push({
    name: 'negation: P(yes | negated) within 0.05 of 1 - P(yes | plain) on >= 95% of pairs',
    measured: `${z.negation.within} of ${z.negation.pairs}`,
    met: z.negation.pairs > 0 && z.negation.within / z.negation.pairs >= 0.95,
  });
  const above = z.rows.filter((r) => r.brier > r.uniformBrier + 1e-9);
  out.push({
    name: "every held-out source set's Brier at or below uniform (each map, each source and kind)",
    measured:
      above.length === 0
        ? 'all'
        : `above: ${above.map((r) => `${r.map} ${r.source}/${r.kind} ${f(r.brier, 4)} vs ${f(r.uniformBrier, 4)}`).join('; ')}`,
    met: above.length === 0,
  });
  const clinc = heldOutChoice.find((c) => c.task === 'clinc150');
  out.push({
    name: 'choice: clinc150 held out, accuracy >= 0.60',
    measured: f(clinc?.accuracy),
    met: (clinc?.accuracy ?? 0) >= 0.6,
  });
  const worse = heldOutChoice.filter((c) => {
    const b = baseline[c.task];
    return c.task !== 'clinc150' && b !== undefined && c.brier > b.brier + 1e-4;
  });
  out.push({
    name: "other choice sets held out at least as good as 3.7's (Brier)",
    measured:
      worse.length === 0
        ? 'all'
        : `worse: ${worse.map((c) => `${c.task} ${f(c.brier, 4)} vs ${f(baseline[c.task]?.brier, 4)}`).join('; ')}`,
    met: worse.length === 0,
  });
  if (coherence) {
    const bad = coherence.laws.filter((l) => l.byConstruction && (l.rate ?? 0) > 0.1);
    out.push({
      name: "coherence: each law's violation rate <= 10% on informative answers (laws by construction)",
      measured: bad.length === 0 ? 'all' : bad.map((l) => `${l.law} ${f(l.rate)}`).join('; '),
      met: bad.length === 0,
    });
    out.push({
      name: 'coherence: informative rate >= 50%',
      measured: f(coherence.informativeRate),
      met: coherence.informativeRate >= 0.5,
    });
  }
  if (paraphrase) {
    out.push({
      name: 'paraphrase suite: mean change <= 0.08',
      measured: f(paraphrase.meanChange),
      met: paraphrase.meanChange <= 0.08,
    });
    out.push({
      name: 'paraphrase suite: max change <= 0.30',
      measured: `${f(paraphrase.maxChange, 2)} (${paraphrase.maxGroup})`,
      met: paraphrase.maxChange <= 0.3,
    });
  }
  return out;
}

/** The card's section: maps, per-source numbers, pooled, negation, coherence, targets. */
export function zeroShotSection(
  z: ZeroShotReport,
  coherence: CoherenceReport | null,
  goals: readonly Target[],
): string[] {
  const row = (r: ZeroShotRow) =>
    `| ${r.map} | ${r.source} | ${r.kind} | ${r.n} | ${f(r.auc)} | ${f(r.accuracy)} / ${f(r.prior)} | ${f(r.brier, 4)} / ${f(r.uniformBrier, 4)} | ${f(r.ece)} (${f(r.eceFloor)}) | ${f(r.informative, 2)} |`;
  const mapLine = (name: MapName) => {
    const m = z.maps[name];
    if (!m) return `- \`${name}\`: not fitted`;
    return `- \`${name}\` (${m.families.join(', ')}): ${m.alpha >= 1 ? 'abstains (no setting kept every held-out set at or below uniform)' : `${m.signals.map((s, i) => `${f(m.weights[i])} ${s}`).join(' + ')}${name === 'choice' ? '' : ` + ${f(m.bias)}`}, mixed ${m.alpha} with uniform`}`;
  };
  return [
    'A question is read from its own words (src/engines/embedded/reading.ts: family, side, negation; never the',
    'state) and answered by the signal measured to carry information for its family (zero-shot.ts), a few',
    "parameters per family fitted leave-source-out (src/training/families.ts): the state's cosine with the question",
    "or option standardized against that question's own baseline over a reference pool of states (mean and",
    'covariance of 200 states per set, the pool that measures a set built without it), in MiniLM-L6 and USE-lite;',
    'the polarity axis for polarity questions; the cosine of the two parts for pairs. A negated yes/no question is',
    'answered as the complement of its plain wording. Families without skill abstain.',
    '',
    ...(Object.keys(MAPS) as MapName[]).map(mapLine),
    '',
    'Held out by source set: every number below is of a map fitted without the set (its alpha chosen without it',
    "too), on the sets' own questions (`native`) and on questions generated from their labels (src/training/templates.ts:",
    '`topic`, `emotion`, `polarity` yes/no questions, `subset` choices with a "none of these" option).',
    '',
    '| map | set | questions | n | AUC | accuracy (model / majority) | Brier (model / uniform) | ECE (floor) | informative |',
    '|---|---|---|---|---|---|---|---|---|',
    ...z.rows.map(row),
    ...z.pooled.map(row),
    '',
    `Negation: ${z.negation.within} of ${z.negation.pairs} plain/negated pairs within 0.05 of complementary (the negated wording is read`,
    'in its plain form, so the two agree by construction wherever the reading finds the negation).',
    '',
    ...(coherence
      ? [
          '### Coherence suite',
          `\`npm run bench:coherence\` (src/training/coherence.ts), ${coherence.answers} answers, informative rate ${f(coherence.informativeRate)}:`,
          '| law | by construction | cases | informative | violations | rate |',
          '|---|---|---|---|---|---|',
          ...coherence.laws.map(
            (l) =>
              `| ${l.law} | ${l.byConstruction ? 'yes' : 'no'} | ${l.cases} | ${l.informative} | ${l.violations} | ${f(l.rate)} |`,
          ),
          '',
        ]
      : []),
    '### Targets of issue 31 (held out by source set)',
    ...goals.map((g) => `- ${g.name}: ${g.measured} (${g.met ? 'met' : '**not met**'})`),
  ];
}
