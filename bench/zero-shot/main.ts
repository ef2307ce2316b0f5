/**
 * `npm run bench:zero-shot [-- --model-dir DIR] [--limit N]`: brier-lite's zero-shot answers on every
 * labelled set of ../shared/data/decisions and every CalDec site (issue 38), two ways, printed as tables
 * and written to bench/results/zero-shot.json:
 *
 * 1. Held out by set, as `npm run train` measured them (report.json `skill`): each set answered by maps,
 *    pools, head fits and a skill model fitted without it and its twins, whatever its questions read as.
 * 2. As served now: the artifact in DIR (default: the shipped one) answering N rows of each set's own
 *    question (default 100; 0 skips) and CalDec's validation through the embedded engine. Sets that
 *    trained the artifact are not held out here: this part checks that serving answers as training
 *    measured, not how well the model generalizes.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ReportFile, SkillRow } from '../../src/engines/embedded/artifacts.ts';
import { createEmbeddedEngine, DEFAULT_MODEL_DIR } from '../../src/engines/embedded/index.ts';
import type { DecisionRequest } from '../../src/engines/request.ts';
import { loadCaldec } from '../../src/training/caldec.ts';
import { HEAD_TASKS } from '../../src/training/config.ts';
import { decisionsDir, listTasks, loadTask } from '../../src/training/data.ts';
import { asServed, computeMetrics, confidencePairs, eceNoiseFloor, oneHot } from '../../src/training/evaluation.ts';
import { aboveUniform, skillTable } from '../../src/training/skill-card.ts';
import { auc, informative } from '../../src/training/zero-shot-card.ts';
import { ROOT } from '../../test/server.ts';

const { values } = parseArgs({ options: { 'model-dir': { type: 'string' }, limit: { type: 'string' } } });
const modelDir = values['model-dir'] ?? DEFAULT_MODEL_DIR;
const limit = Number(values.limit ?? 100);
if (!Number.isInteger(limit) || limit < 0) throw new Error('--limit: a whole number of rows per set (0 skips part 2)');

const report = JSON.parse(readFileSync(path.join(modelDir, 'report.json'), 'utf8')) as ReportFile;
const heldOut = report.skill ?? null;
if (heldOut) {
  console.log(`\n1. held out by set (npm run train; skill floor ${heldOut.floor})\n`);
  for (const line of skillTable([...heldOut.pooled, ...heldOut.sets, ...heldOut.caldec])) console.log(line);
  const bad = aboveUniform(heldOut);
  console.log(
    `\nabove the uniform answer's Brier + 0.005: ${bad.length === 0 ? 'none' : bad.map((r) => r.name).join(', ')}`,
  );
} else console.log(`\n1. ${modelDir}/report.json has no skill section (a model before brier-lite 4.1)`);

interface Served {
  name: string;
  n: number;
  informative: number;
  accuracy: number;
  brier: number;
  uniformBrier: number;
  ece: number;
  eceFloor: number;
  auc: number | null;
}

async function served(): Promise<Served[]> {
  if (limit === 0 || !existsSync(decisionsDir())) {
    console.log(
      limit === 0
        ? '\n2. skipped (--limit 0)'
        : '\n2. skipped: ../shared/data/decisions is absent (the rows come from it)',
    );
    return [];
  }
  const engine = createEmbeddedEngine({ modelDir });
  await engine.load();
  const out: Served[] = [];
  const measure = async (name: string, cases: { request: DecisionRequest; targets: number[][] }[]) => {
    const items: { p: number[]; t: number[] }[] = [];
    for (const c of cases) {
      const answer = await engine.answer(c.request, AbortSignal.timeout(60_000));
      answer.probabilities.forEach((p, qi) => {
        const t = c.targets[qi];
        if (t) items.push({ p: asServed(p), t });
      });
    }
    const m = computeMetrics(items);
    const u = computeMetrics(items.map((it) => ({ p: it.p.map(() => 1 / it.p.length), t: it.t })));
    const binary = items.every((it) => it.p.length === 2 && (it.t[1] === 0 || it.t[1] === 1));
    const a = binary
      ? auc(
          items.map((it) => it.p[1] ?? 0),
          items.map((it) => it.t[1] ?? 0),
        )
      : null;
    out.push({
      name,
      n: items.length,
      informative: items.filter((it) => informative(it.p)).length / Math.max(1, items.length),
      accuracy: m.accuracy,
      brier: m.brier,
      uniformBrier: u.brier,
      ece: m.ece,
      eceFloor: eceNoiseFloor(confidencePairs(items).map((c) => c.confidence)),
      auc: a,
    });
  };
  try {
    for (const task of listTasks()) {
      const rows = loadTask(task, limit, HEAD_TASKS);
      await measure(
        task,
        rows.map((ex) => ({
          request: ex.request,
          targets: [oneHot(ex.request.questions[0]?.options.length ?? 2, ex.target)],
        })),
      );
    }
    const bySite = new Map<string, ReturnType<typeof loadCaldec>>();
    for (const c of loadCaldec()) bySite.set(c.site, [...(bySite.get(c.site) ?? []), c]);
    for (const [site, cases] of [...bySite].sort(([a], [b]) => a.localeCompare(b)))
      await measure(
        `caldec/${site}`,
        cases.slice(0, limit).map((c) => ({ request: c.request, targets: c.targets })),
      );
  } finally {
    await engine.close();
  }
  const f = (x: number | null, d = 3) => (x === null ? '-' : x.toFixed(d));
  console.log(`\n2. as served by ${modelDir} (${limit} rows per set or site; sets that trained it are not held out)\n`);
  console.log('| set | n | informative | accuracy | Brier / uniform | ECE (floor) | AUC |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of out)
    console.log(
      `| ${r.name} | ${r.n} | ${f(r.informative, 2)} | ${f(r.accuracy)} | ${f(r.brier, 4)} / ${f(r.uniformBrier, 4)} | ${f(r.ece)} (${f(r.eceFloor)}) | ${f(r.auc)} |`,
    );
  return out;
}

const live = await served();
const file = path.join(ROOT, 'bench', 'results', 'zero-shot.json');
mkdirSync(path.dirname(file), { recursive: true });
const heldOutRows: SkillRow[] = heldOut
  ? [...heldOut.pooled, ...heldOut.sets, ...heldOut.units, ...heldOut.caldec]
  : [];
writeFileSync(
  file,
  `${JSON.stringify({ date: new Date().toISOString(), model: report.skill ? modelDir : null, heldOut: heldOutRows, served: live }, null, 2)}\n`,
);
console.log(`\nwrote ${path.relative(ROOT, file)}`);
