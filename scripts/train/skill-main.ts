/**
 * `npm run train:skill [-- --write]`: refits stage S (the skill model, src/training/skill-fit.ts) from the
 * held-out answers the last `npm run train` kept in .cache/brier-lite/stage-s-items.jsonl and prints its
 * held-out tables: for measuring variants of the skill model in seconds. `--write` also rewrites the
 * shipped artifact's skill.json, golden.json, report.json's `skill` section and the model card's skill
 * section, exactly as `npm run train` writes them from the same answers (the stages before S are
 * deterministic, so a full `npm run train` reproduces the files).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GoldenFile, ReportFile, WeightsFile } from '../../src/engines/embedded/artifacts.ts';
import { createEmbeddedEngine } from '../../src/engines/embedded/index.ts';
import { loadModel, predict } from '../../src/engines/embedded/model.ts';
import { paraphraseSection } from '../../src/training/card.ts';
import { runCoherence } from '../../src/training/coherence.ts';
import { openStores } from '../../src/training/embed.ts';
import { goldenInputs } from '../../src/training/golden.ts';
import { runSuite } from '../../src/training/paraphrase.ts';
import { aboveUniform, skillReport, skillSection, skillTable } from '../../src/training/skill-card.ts';
import { fitSkill } from '../../src/training/skill-fit.ts';
import { readStageSItems, STAGE_S_ITEMS, skillFileOf } from '../../src/training/stage-s.ts';
import { defaultOutDir } from '../../src/training/train.ts';

if (!existsSync(STAGE_S_ITEMS)) {
  console.log(`train:skill needs ${STAGE_S_ITEMS}: run npm run train first`);
  process.exit(1);
}
const store = openStores(true).use;
const items = readStageSItems((t) => store.get(t) ?? null);
const fit = fitSkill(items);
const report = skillReport(items, fit);
for (const line of skillTable([...report.pooled, ...report.sets, ...report.units, ...report.caldec])) console.log(line);
console.log(`sharpness ${report.sharpness}, prior ${report.prior}, quantile ${fit.model.quantile}`);
console.log(
  `above uniform + 0.005: ${
    aboveUniform(report)
      .map((r) => r.name)
      .join(', ') || 'none'
  }`,
);
console.log(`abstains on: ${report.abstains.map((a) => a.unit).join(', ')}`);

if (process.argv.includes('--write')) {
  const dir = defaultOutDir();
  const weights = JSON.parse(readFileSync(join(dir, 'weights.json'), 'utf8')) as WeightsFile;
  writeFileSync(join(dir, 'skill.json'), `${JSON.stringify(skillFileOf(fit.model, weights.modelId))}\n`);
  const model = loadModel(dir);
  const golden: GoldenFile = {
    modelId: weights.modelId,
    probabilities: goldenInputs().map((x) => predict(x, model).probabilities),
  };
  writeFileSync(join(dir, 'golden.json'), `${JSON.stringify(golden)}\n`);
  const reportFile = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as ReportFile;
  // the suites that answer through the engine, on the model as now written
  const engine = createEmbeddedEngine({ modelDir: dir });
  await engine.load();
  const { summary: paraphrase } = await runSuite(engine);
  const coherence = await runCoherence(engine).finally(() => engine.close());
  writeFileSync(
    join(dir, 'report.json'),
    `${JSON.stringify({ ...reportFile, skill: report, paraphrase, coherence }, null, 2)}\n`,
  );
  let card = readFileSync(join(dir, 'MODEL_CARD.md'), 'utf8');
  const replace = (heading: string, lines: readonly string[]) => {
    const start = card.indexOf(heading);
    const end = card.indexOf('\n## ', start + 3);
    if (start < 0 || end < 0) throw new Error(`MODEL_CARD.md has no "${heading}" section: run npm run train`);
    card = `${card.slice(0, start)}${lines.join('\n')}${card.slice(end)}`;
  };
  replace('## Skill: how far', skillSection(report));
  replace('## Paraphrase suite', ['## Paraphrase suite', ...paraphraseSection(paraphrase)]);
  writeFileSync(join(dir, 'MODEL_CARD.md'), card);
  console.log(`wrote skill.json, golden.json, report.json and MODEL_CARD.md (skill, paraphrase, coherence) in ${dir}`);
}
