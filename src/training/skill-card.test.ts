import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { seededUnitVector } from '../../test/fixtures/embedded.ts';
import type { ReportFile } from '../engines/embedded/artifacts.ts';
import { DEFAULT_MODEL_DIR } from '../engines/embedded/index.ts';
import { aboveUniform, KNOWN_ABOVE_UNIFORM, skillReport, UNIFORM_MARGIN } from './skill-card.ts';
import { fitSkill, type SkillItem } from './skill-fit.ts';

describe('the committed evaluation of the skill model (report.json, held out by set)', () => {
  const report = JSON.parse(readFileSync(join(DEFAULT_MODEL_DIR, 'report.json'), 'utf8')) as ReportFile;
  const skill = report.skill;

  it('covers every labelled set and CalDec site', () => {
    assert.ok(skill, 'report.json has a skill section');
    assert.ok(skill.sets.length >= 36, `${skill.sets.length} sets`);
    assert.ok(skill.caldec.length >= 18, `${skill.caldec.length} CalDec sites`);
  });

  it(`answers no set, kind of question or CalDec site worse than the uniform answer by more than ${UNIFORM_MARGIN} (Brier), but the documented misses`, () => {
    assert.ok(skill);
    assert.deepEqual(
      aboveUniform(skill)
        .map((r) => r.name)
        .sort(),
      [...KNOWN_ABOVE_UNIFORM].sort(),
      'a set newly above uniform fails; one that no longer is must leave KNOWN_ABOVE_UNIFORM',
    );
    for (const r of aboveUniform(skill)) assert.ok(r.brier < r.uniformBrier + 0.02, `${r.name}: ${r.brier}`);
  });

  it('stays informative somewhere: a model that abstains everywhere would pass the check above', () => {
    assert.ok(skill);
    const informative = skill.sets.filter((r) => r.informative >= 0.8 && r.brier < r.uniformBrier - 0.01);
    assert.ok(informative.length >= 5, `informative sets: ${informative.map((r) => r.name).join(', ')}`);
  });
});

describe('skillReport', () => {
  it('measures the answers as mixed by their held-out skill, beside the answers before it and the uniform answer', () => {
    const frame = seededUnitVector(3);
    const item = (set: string, yes: number, pYes: number): SkillItem => ({
      unit: `${set}/own`,
      set,
      type: 'noul',
      frameText: 'q',
      frame,
      family: 'topic',
      p: [1 - pYes, pYes],
      t: [1 - yes, yes],
    });
    // set a answers right; set b, asked alike, right 3 times in 5: held out, a takes b's skill
    // (s* = sum (p - u).(t - u) / sum |p - u|^2 = (180 - 120) 0.2 / (300 x 0.16) = 0.25)
    const items = [
      ...Array.from({ length: 150 }, () => [item('a', 1, 0.9), item('a', 0, 0.1)]).flat(),
      ...Array.from({ length: 60 }, () => [item('b', 1, 0.9), item('b', 0, 0.1), item('b', 1, 0.9)]).flat(),
      ...Array.from({ length: 60 }, () => [item('b', 0, 0.9), item('b', 1, 0.1)]).flat(),
    ];
    const fit = fitSkill(items);
    const report = skillReport(items, fit);
    const a = report.sets.find((r) => r.name === 'a');
    assert.ok(a);
    assert.equal(a.uniformBrier, 0.25);
    assert.ok(Math.abs(a.brierBefore - 0.01) < 1e-9);
    assert.ok(Math.abs(a.skill - 0.25) < 1e-6, `skill ${a.skill}`);
    assert.ok(a.brier > a.brierBefore && a.brier < a.uniformBrier, `${a.brier}`);
    assert.equal(a.informative, 1);
    assert.equal(a.auc, 1);
  });
});
