/**
 * `npm run bench:lite-latency [-- --model-dir DIR] [--baseline DIR] [--runs N]`: latency of the embedded
 * engine (the committed artifact or the one in DIR, real encoders) for one request with a ~300-token
 * state and 3 questions; N runs per scenario (default 50). With --baseline, the two artifacts are
 * measured alternately, twice each, in one run (this machine is shared: compare within a run only).
 * Writes bench/results/latency-brier-lite.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { LatencyReport } from '../../src/engines/embedded/artifacts.ts';
import { REPO_ROOT } from '../../src/training/data.ts';
import { measureEngineLatency } from '../../src/training/latency.ts';

const { values } = parseArgs({
  options: { 'model-dir': { type: 'string' }, baseline: { type: 'string' }, runs: { type: 'string' } },
});
const runs = Number(values.runs ?? 50);
const subjects: { name: string; dir: string | undefined }[] = [
  ...(values.baseline ? [{ name: `baseline (${values.baseline})`, dir: values.baseline }] : []),
  { name: values['model-dir'] ? `model (${values['model-dir']})` : 'committed model', dir: values['model-dir'] },
];
const results: { name: string; round: number; report: LatencyReport; load: number }[] = [];
for (let round = 0; round < (values.baseline ? 2 : 1); round++)
  for (const s of subjects) {
    const report = await measureEngineLatency(s.dir, (m) => console.log(`${s.name}: ${m}`), runs);
    results.push({ name: s.name, round, report, load: loadavg()[0] ?? 0 });
  }
console.log('\n| model | round | load | new state p50 / p90 (ms) | cached p50 (ms) | cold p50 (ms) | load (ms) |');
console.log('| --- | --: | --: | --: | --: | --: | --: |');
for (const r of results)
  console.log(
    `| ${r.name} | ${r.round + 1} | ${r.load.toFixed(2)} | ${r.report.newStateP50.toFixed(1)} / ${r.report.newStateP90.toFixed(1)} | ${r.report.cachedP50.toFixed(1)} | ${r.report.coldP50.toFixed(1)} | ${r.report.loadMs.toFixed(0)} |`,
  );
const dir = join(REPO_ROOT, 'bench', 'results');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'latency-brier-lite.json'), `${JSON.stringify(results, null, 2)}\n`);
