/**
 * `npm run train:compare [-- --before <git ref>] [-- --after <report.json>]`: the held-out numbers
 * of two training reports side by side (src/training/report-compare.ts). Default: the committed
 * report at HEAD against the working tree's models/brier-lite/report.json.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '../../src/training/data.ts';
import { compareReports, comparisonTable, summarize } from '../../src/training/report-compare.ts';

const { values } = parseArgs({ options: { before: { type: 'string' }, after: { type: 'string' } } });
const ref = values.before ?? 'HEAD';
const before = JSON.parse(
  execFileSync('git', ['show', `${ref}:models/brier-lite/report.json`], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  }),
) as Record<string, unknown>;
const afterPath = values.after ?? `${REPO_ROOT}/models/brier-lite/report.json`;
const after = JSON.parse(readFileSync(afterPath, 'utf8')) as Record<string, unknown>;
const rows = compareReports(before, after);
console.log(comparisonTable(rows, [ref, 'now']));
const line = (what: string, s: ReturnType<typeof summarize>) =>
  `${what}: ${s.rows} rows, Brier within +-0.003 on ${s.withinBrier} (largest change ${s.maxBrier.delta.toFixed(4)}, ${s.maxBrier.name}); ECE within +-0.005 on ${s.withinEce} (largest ${s.maxEce.delta.toFixed(4)}, ${s.maxEce.name})`;
console.log(`\n${line('all held-out rows', summarize(rows))}`);
for (const group of ['leave-tasks-out', 'set left out', 'held-out sets', 'CalDec', 'skill', 'zero-shot map']) {
  const some = rows.filter((r) => r.name.startsWith(group));
  if (some.length > 0) console.log(line(`  ${group}`, summarize(some)));
}
