/**
 * `npm run bench:paraphrase`: the embedded model on the hand-written paraphrase suite
 * (src/training/paraphrase-groups.json): stability within each group (the largest change of any
 * probability between wordings of one meaning; mean and maximum) and, on the plain groups, accuracy,
 * the mean probability of the right option and how often the model abstained. Prints tables and
 * writes bench/results/paraphrase.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createEmbeddedEngine } from '../../src/engines/embedded/index.ts';
import { runSuite } from '../../src/training/paraphrase.ts';
import { ROOT } from '../../test/server.ts';

const engine = createEmbeddedEngine();
await engine.load();
const { results, answers, summary } = await runSuite(engine).finally(() => engine.close());
console.log(`\nparaphrase suite, ${engine.info.id}: ${summary.groups} groups\n`);
console.log('| group | type | plain | largest change | right (of wordings) | p(right) | abstained |');
console.log('| --- | --- | --- | --: | --: | --: | --: |');
for (const r of results) {
  console.log(
    `| ${r.id} | ${r.type} | ${r.plain ? 'yes' : 'no'} | ${r.change.toFixed(2)} | ${r.correct} of ${r.wordings} | ${r.expectedProbability.toFixed(2)} | ${r.abstained} |`,
  );
}
console.log(
  `\nwithin-group change: mean ${summary.meanChange.toFixed(3)}, max ${summary.maxChange.toFixed(2)} (${summary.maxGroup})`,
);
console.log('\n| type | groups | mean change | max change | plain wordings | accuracy | p(right) | abstained |');
console.log('| --- | --: | --: | --: | --: | --: | --: | --: |');
for (const type of ['noul', 'choice', 'score']) {
  const t = summary.byType[type];
  const p = summary.plain[type];
  if (!t || !p) continue;
  console.log(
    `| ${type} | ${t.groups} | ${t.meanChange.toFixed(3)} | ${t.maxChange.toFixed(2)} | ${p.wordings} | ${p.accuracy.toFixed(2)} | ${p.expectedProbability.toFixed(2)} | ${p.abstained} |`,
  );
}
const out = path.join(ROOT, 'bench', 'results', 'paraphrase.json');
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify({ date: new Date().toISOString(), model: engine.info.id, summary, results, answers }, null, 2)}\n`,
);
console.log(`\nwrote ${path.relative(ROOT, out)}`);
