/**
 * The shipped calibration set (models/calibration-set/) is what scripts/calibration-set.ts builds from
 * ../shared/data, byte for byte (skipped with a message without ../shared), and it ships only sets
 * whose licences allow redistribution.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { build, SOURCES } from '../../scripts/calibration-set.ts';
import { ROOT } from '../server.ts';

const SHARED = join(ROOT, '..', 'shared', 'data', 'decisions');
const DIR = join(ROOT, 'models', 'calibration-set');

test('the committed calibration set is the script rebuilt from ../shared', {
  skip: existsSync(SHARED) ? false : `${SHARED} is absent`,
}, () => {
  const built = build();
  assert.equal(readFileSync(join(DIR, 'calibration-set.jsonl'), 'utf8'), built.jsonl);
  assert.equal(readFileSync(join(DIR, 'PROVENANCE.md'), 'utf8'), built.provenance);
});

test('every shipped row comes from a listed source whose licence allows redistribution', () => {
  const allowed = /PDDL|CC0|CC BY(-SA)? [34]\.0|Apache-2\.0|MIT/;
  const sets = new Map(SOURCES.map((s) => [s.set, s]));
  for (const s of SOURCES) assert.match(s.licence, allowed, s.set);
  for (const s of SOURCES) assert.doesNotMatch(s.licence, /NC|research|non-commercial|not stated/i, s.set);
  const provenance = readFileSync(join(DIR, 'PROVENANCE.md'), 'utf8');
  for (const line of readFileSync(join(DIR, 'calibration-set.jsonl'), 'utf8').trim().split('\n')) {
    const row = JSON.parse(line) as { set: string };
    const source = sets.get(row.set);
    assert.ok(source, `${row.set}: not a listed source`);
    assert.ok(provenance.includes(`| ${row.set} | ${source.type} |`), `${row.set}: in PROVENANCE.md`);
  }
});
