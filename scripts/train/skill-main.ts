/**
 * `npm run train:skill`: refits stage S (the skill model, src/training/skill-fit.ts) from the held-out
 * answers the last `npm run train` kept in .cache/brier-lite/stage-s-items.jsonl and prints its held-out
 * tables, without writing the artifact: for measuring variants of the skill model in seconds.
 */
import { existsSync } from 'node:fs';
import { openStores } from '../../src/training/embed.ts';
import { aboveUniform, skillReport, skillTable } from '../../src/training/skill-card.ts';
import { fitSkill } from '../../src/training/skill-fit.ts';
import { readStageSItems, STAGE_S_ITEMS } from '../../src/training/stage-s.ts';

if (!existsSync(STAGE_S_ITEMS)) {
  console.log(`train:skill needs ${STAGE_S_ITEMS}: run npm run train first`);
  process.exit(1);
}
const store = openStores(true).use;
const items = readStageSItems((t) => store.get(t) ?? null);
const fit = fitSkill(items);
const report = skillReport(items, fit);
for (const line of skillTable([...report.pooled, ...report.sets, ...report.units, ...report.caldec])) console.log(line);
console.log(`sharpness ${report.sharpness}, prior ${report.prior}`);
console.log(
  `above uniform + 0.005: ${
    aboveUniform(report)
      .map((r) => r.name)
      .join(', ') || 'none'
  }`,
);
console.log(`abstains on: ${report.abstains.map((a) => a.unit).join(', ')}`);
