/**
 * `npm run bench:calibration -- --model SPEC [--sets a,b] [--limit 20]`: a custom model (a GGUF file,
 * an upstream server; BRIER_GGUF_PROMPT picks a GGUF's prompt format) on labelled sets of ../shared/data/decisions that the shipped calibration set
 * does not contain, raw and through its calibration file (`brier models calibrate`; the half-and-half
 * shrink when there is none): per set, n, accuracy, and Brier raw / served / uniform. The check that
 * the calibration holds outside the sets it was fitted on. Prints a table and writes
 * bench/results/calibration-<file>.json. Needs ../shared/data.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/config.ts';
import { applyModelCalibration, readModelCalibration, resolveModelCalibration } from '../../src/engines/calibrated.ts';
import { calibrationDir, calibrationKeyOf, createRawEngine } from '../../src/engines/create.ts';
import { decisionsDir } from '../../src/training/data.ts';
import { brierScore, computeMetrics, oneHot, uniform } from '../../src/training/evaluation.ts';
import { collectRawAnswers, parseCalibrationSet, selectRows } from '../../src/training/model-calibration.ts';
import { ROOT } from '../../test/server.ts';

/** Sets outside the shipped calibration set, one or two per type, with short states. */
const DEFAULT_SETS = ['sst2', 'rte', 'trec', 'tweeteval_emotion', 'ag_news', 'sst5', 'tweeteval_sentiment'];

const { values } = parseArgs({
  options: { model: { type: 'string' }, sets: { type: 'string' }, limit: { type: 'string', default: '20' } },
});
if (!existsSync(decisionsDir())) {
  console.log('bench:calibration skipped: ../shared/data/decisions is absent');
  process.exit(0);
}
const config = loadConfig({ ...process.env, ...(values.model ? { BRIER_MODEL: values.model } : {}) });
const keyOf = calibrationKeyOf(config);
if (keyOf === null) {
  console.error('bench:calibration: --model (or BRIER_MODEL) must name a GGUF file or an upstream server');
  process.exit(2);
}
const sets = values.sets ? values.sets.split(',') : DEFAULT_SETS;
const limit = Number(values.limit);
/** The seeded sample of each set as calibration rows (`set` added): the first `limit` after a hash order. */
const rows = sets.flatMap((set) => {
  const lines = readFileSync(join(decisionsDir(), `${set}.jsonl`), 'utf8')
    .trim()
    .split('\n');
  const text = lines.map((l) => JSON.stringify({ ...JSON.parse(l), set })).join('\n');
  return selectRows(parseCalibrationSet(text), limit);
});

const engine = await createRawEngine(config);
await engine.load();
const key = await keyOf(engine);
const calibration = resolveModelCalibration(key, await readModelCalibration(calibrationDir(config), key), 'shrink');
const started = performance.now();
const answers = await collectRawAnswers(engine, rows);
const seconds = (performance.now() - started) / 1000;
await engine.close();

const result = sets.map((set) => {
  const items = answers.filter((a) => a.set === set);
  const served = items.map((a) => applyModelCalibration(a.p, calibration.types[a.type]));
  const metricsOf = (ps: number[][]) =>
    computeMetrics(ps.map((p, i) => ({ p, t: oneHot(p.length, items[i]?.target ?? 0) })));
  const raw = metricsOf(items.map((a) => a.p));
  const after = metricsOf(served);
  const u = items.reduce((s, a) => s + brierScore(uniform(a.p.length), oneHot(a.p.length, a.target)), 0) / items.length;
  return {
    set,
    type: items[0]?.type ?? '',
    n: items.length,
    accuracy: raw.accuracy,
    raw: raw.brier,
    raw_ece: raw.ece,
    served: after.brier,
    uniform: u,
  };
});

console.log(
  `${basename(config.model ?? '')} (prompt ${config.ggufPrompt}): calibration ${calibration.mode}${calibration.calibrated ? '' : ' (not calibrated)'}, ${answers.length} rows in ${seconds.toFixed(0)} s`,
);
console.log(
  `${'set'.padEnd(22)}${'type'.padEnd(8)}${'n'.padStart(4)}  ${'acc'.padStart(6)}  ${'raw'.padStart(6)}  ${'ece'.padStart(6)}  ${'served'.padStart(6)}  ${'uniform'.padStart(7)}`,
);
for (const r of result) {
  const worse = r.served > r.uniform + 1e-9 ? '  worse than uniform' : '';
  console.log(
    `${r.set.padEnd(22)}${r.type.padEnd(8)}${String(r.n).padStart(4)}  ${r.accuracy.toFixed(3).padStart(6)}  ${r.raw.toFixed(3).padStart(6)}  ${r.raw_ece.toFixed(3).padStart(6)}  ${r.served.toFixed(3).padStart(6)}  ${r.uniform.toFixed(3).padStart(7)}${worse}`,
  );
}
mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
const out = join(
  ROOT,
  'bench',
  'results',
  `calibration-${basename(config.model ?? 'model')}${config.ggufPrompt === 'chat' ? '-chat' : ''}.json`,
);
writeFileSync(
  out,
  `${JSON.stringify({ model: config.model, prompt: config.ggufPrompt, key, mode: calibration.mode, types: calibration.types, seconds, sets: result }, null, 2)}\n`,
);
console.log(JSON.stringify({ out }));
