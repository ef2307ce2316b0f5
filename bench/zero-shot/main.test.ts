import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import type { ReportFile } from '../../src/engines/embedded/artifacts.ts';
import { DEFAULT_MODEL_DIR } from '../../src/engines/embedded/index.ts';

test('bench:zero-shot prints every set and CalDec site held out by set, and names those above uniform', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(import.meta.dirname, 'main.ts'), '--limit', '0'],
    {
      timeout: 60_000,
    },
  );
  const report = JSON.parse(readFileSync(join(DEFAULT_MODEL_DIR, 'report.json'), 'utf8')) as ReportFile;
  assert.ok(report.skill);
  for (const r of [...report.skill.sets, ...report.skill.caldec])
    assert.ok(stdout.includes(`| ${r.name} |`), `prints ${r.name}`);
  assert.match(stdout, /above the uniform answer's Brier \+ 0\.005: clickbait, mnli/);
  assert.match(stdout, /2\. skipped \(--limit 0\)/);
});
