/**
 * `npm run bench:coherence [-- --model-dir DIR] [--baseline DIR]`: the coherence suite
 * (src/training/coherence.ts) on the embedded model (the shipped one, or the artifact in DIR), and
 * with --baseline on a second artifact in the same run (e.g. an earlier release extracted with
 * `git show`), side by side. Prints a table and writes bench/results/coherence.json. Needs
 * ../shared/data (the cases are drawn from its sets).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createEmbeddedEngine, DEFAULT_MODEL_DIR } from '../../src/engines/embedded/index.ts';
import { type CoherenceReport, runCoherence } from '../../src/training/coherence.ts';
import { decisionsDir } from '../../src/training/data.ts';
import { ROOT } from '../../test/server.ts';

const { values } = parseArgs({ options: { 'model-dir': { type: 'string' }, baseline: { type: 'string' } } });
if (!existsSync(decisionsDir())) {
  console.log('bench:coherence skipped: ../shared/data/decisions is absent (the cases are drawn from it)');
  process.exit(0);
}

async function run(modelDir: string | undefined): Promise<CoherenceReport> {
  const engine = createEmbeddedEngine(modelDir ? { modelDir } : {});
  await engine.load();
  const report = await runCoherence(engine).finally(() => engine.close());
  // The engine reports the id it serves under; the artifact's own id tells two artifacts apart.
  const weights = JSON.parse(readFileSync(path.join(modelDir ?? DEFAULT_MODEL_DIR, 'weights.json'), 'utf8')) as {
    modelId?: string;
  };
  return { ...report, model: weights.modelId ?? report.model };
}

const reports: CoherenceReport[] = [];
if (values.baseline) reports.push(await run(values.baseline));
reports.push(await run(values['model-dir']));
const rate = (r: CoherenceReport, law: string) => {
  const l = r.laws.find((x) => x.law === law);
  return l ? `${l.rate === null ? '-' : l.rate.toFixed(3)} (${l.violations}/${l.informative} of ${l.cases})` : '-';
};
console.log(`\ncoherence suite (tolerance 0.05; violations among informative cases)\n`);
console.log(`| law | by construction | ${reports.map((r) => r.model).join(' | ')} |`);
console.log(`| --- | --- | ${reports.map(() => '--:').join(' | ')} |`);
for (const l of reports.at(-1)?.laws ?? [])
  console.log(`| ${l.law} | ${l.byConstruction ? 'yes' : 'no'} | ${reports.map((r) => rate(r, l.law)).join(' | ')} |`);
console.log(
  `| informative answers | | ${reports.map((r) => `${r.informativeRate.toFixed(3)} of ${r.answers}`).join(' | ')} |`,
);
const out = path.join(ROOT, 'bench', 'results', 'coherence.json');
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), reports }, null, 2)}\n`);
console.log(`\nwrote ${path.relative(ROOT, out)}`);
