/**
 * `npm run bench:paraphrase`: the embedded model on the hand-written paraphrase suite
 * (bench/paraphrase/groups.json): stability within each group (the largest change of any
 * probability between wordings of one meaning; mean and maximum) and, on the plain groups, accuracy,
 * the mean probability of the right option and how often the model abstained. Prints tables and
 * writes bench/results/paraphrase.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createEmbeddedEngine } from '../../src/engines/embedded/index.ts';
import { createEngineHost } from '../../src/engines/host.ts';
import type { WireAnswer } from '../../src/systemone/protocol.ts';
import { createSystemOne } from '../../src/systemone/serve.ts';
import { ROOT } from '../../test/server.ts';
import { type GroupResult, readGroups, requestOf, scoreGroup, summarize } from './suite.ts';

const engine = createEmbeddedEngine();
await engine.load();
const systemOne = createSystemOne(createEngineHost(engine, { queueLimit: 64, timeoutMs: 60_000 }));
const results: GroupResult[] = [];
const answers: Record<string, WireAnswer[]> = {};
try {
  for (const group of readGroups()) {
    const got: WireAnswer[] = [];
    for (const wording of group.wordings) {
      const { response } = await systemOne.serve(requestOf(group, wording));
      const answer = response.answers.q;
      if (!answer) throw new Error(`no answer for ${group.id}`);
      got.push(answer);
    }
    answers[group.id] = got;
    results.push(scoreGroup(group, got));
  }
} finally {
  await engine.close();
}
const summary = summarize(results);

console.log(`\nparaphrase suite, ${engine.info.id}: ${summary.groups} groups\n`);
console.log('| group | type | plain | largest change | right (of wordings) | p(right) | abstained |');
console.log('| --- | --- | --- | --: | --: | --: | --: |');
for (const r of results) {
  console.log(
    `| ${r.id} | ${r.type} | ${r.plain ? 'yes' : 'no'} | ${r.change.toFixed(2)} | ${r.correct} of ${r.wordings} | ${r.expectedProbability.toFixed(2)} | ${r.abstained} |`,
  );
}
console.log(`\nwithin-group change: mean ${summary.meanChange.toFixed(3)}, max ${summary.maxChange.toFixed(2)}`);
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
